// The Bus across hub nodes: Redis pub/sub with binary payloads. One
// connection publishes and one subscribes, both speaking RESP directly
// (resp-publisher.ts, resp-subscriber.ts); one ioredis connection serves
// ordinary commands for rate limits and presence (`client`). A topic is
// SUBSCRIBEd once per node however many local handlers it has. A node's own publishes come back
// through Redis too, so every reader of a topic sees one order.
// SUBSCRIBEs of one event-loop turn go out as one command (a reconnect storm
// subscribes thousands of host topics), and so do its UNSUBSCRIBEs (a mass
// disconnect). No ioredis auto-pipelining on the command connection: while
// Redis is down it held every command far longer before failing (five API
// calls took 6.8 s instead of 0.6 s,
// test/security-revocation-outage.test.ts). Publishes are coalesced:
// those of one event-loop turn go out as one socket write (each write is a
// syscall that wakes Redis on another core; the cross-node profile showed these
// writes among the hub's heaviest items, three per message).
// Pub/sub loses what is published while a connection is down: after any
// connection comes back, `onReconnect` handlers run (the publishing and the
// command connections announce it to every node on a reserved channel, since
// this node's publishes, or its presence writes, may be what was lost).
import { Redis } from 'ioredis';
import type { Bus, BusHandler } from './bus.js';
import type { Logger } from '../log.js';
import { RespPublisher } from './resp-publisher.js';
import { RespSubscriber } from './resp-subscriber.js';

export interface RedisBusOptions {
  /** Prefix of every channel (and of keys other modules build with `key()`): lets hubs share one Redis. */
  prefix?: string;
  log?: Logger;
  /** How long start-up waits for Redis before giving up, ms. */
  connectTimeoutMs?: number;
}

const NOTHING = new Uint8Array(0);

export class RedisBus implements Bus {
  readonly kind = 'redis' as const;
  /** The command connection, for other modules' keys and scripts. */
  readonly client: Redis;
  private readonly sub: RespSubscriber;
  private readonly pub: RespPublisher;
  private readonly prefix: string;
  private readonly log?: Logger;
  private readonly topics = new Map<string, Set<BusHandler>>();
  /** SUBSCRIBE/UNSUBSCRIBE commands not yet acknowledged. */
  private pendingSubs = 0;
  /** Channels to SUBSCRIBE at the end of this turn, in one command (counted once in pendingSubs meanwhile). */
  private toSubscribe = new Set<string>();
  private subscribeScheduled = false;
  /** Channels to UNSUBSCRIBE at the end of this turn, in one command (a mass disconnect leaves thousands). */
  private toUnsubscribe = new Set<string>();
  /** Publishes held back while a subscription is in flight (see publish). */
  private held: Array<[string, Buffer]> = [];
  private idle: Array<() => void> = [];
  private lastErrorLog = 0;
  private reconnectHandlers = new Set<() => void>();
  private reconnectSoon = false;
  /** The reserved channel on which a node announces that its command connection came back. */
  private readonly resyncChannel: string;
  /** Publishes of this turn not yet written (channel with prefix, own copy of the bytes). */
  private outbox: Array<[string, Buffer]> = [];

  private constructor(url: string, opts: RedisBusOptions) {
    this.prefix = opts.prefix ?? '';
    this.log = opts.log;
    const common = { lazyConnect: true, connectTimeout: opts.connectTimeoutMs ?? 5000, maxRetriesPerRequest: 3 };
    this.client = new Redis(url, { ...common, connectionName: 'hub-cmd' });
    this.client.on('error', (e) => this.logError(e));
    this.resyncChannel = this.prefix + '_bus:reconnected';
    // The publishing and subscribing connections go where ioredis' parsing of the URL says.
    const o = this.client.options;
    const target = { host: o.host, port: o.port, path: o.path, family: o.family, username: o.username, password: o.password, tls: o.tls, connectTimeout: common.connectTimeout };
    const logError = (e: unknown) => this.logError(e);
    const announce = () => this.pub.publishAll([[this.resyncChannel, NOTHING]]);
    this.pub = new RespPublisher(target, { log: this.log, logError, reconnected: announce, lost: announce });
    this.sub = new RespSubscriber(target, { logError, message: (channel, payload) => this.deliver(channel, payload), resubscribed: () => this.reconnected() });
    this.afterDrop(this.client, announce);
  }

  /** Runs `then` each time `conn` is ready again after having lost its connection. */
  private afterDrop(conn: Redis, then: () => void): void {
    let dropped = false;
    conn.on('close', () => (dropped = true));
    conn.on('ready', () => {
      if (!dropped) return;
      dropped = false;
      then();
    });
  }

  /** Handlers run once per burst (a restart of Redis announces from every node). */
  private reconnected(): void {
    if (this.reconnectSoon) return;
    this.reconnectSoon = true;
    setImmediate(() => {
      this.reconnectSoon = false;
      this.log?.info('bus reconnected: resynchronising caches');
      for (const h of [...this.reconnectHandlers]) {
        try {
          h();
        } catch (e) {
          this.log?.warn('bus reconnect handler failed', { err: e });
        }
      }
    });
  }

  /** Connects both connections; rejects when Redis is unreachable. */
  static async connect(url: string, opts: RedisBusOptions = {}): Promise<RedisBus> {
    const bus = new RedisBus(url, opts);
    try {
      await Promise.all([bus.client.connect(), bus.sub.connect(), bus.pub.connect()]);
    } catch (e) {
      bus.client.disconnect();
      await Promise.all([bus.sub.close(), bus.pub.close()]);
      throw e;
    }
    bus.track(bus.sub.subscribe(bus.resyncChannel));
    return bus;
  }

  /** A Redis key in this hub's namespace. */
  key(name: string): string {
    return this.prefix + name;
  }

  publish(topic: string, payload: Uint8Array): void {
    // A copy: the caller may reuse its buffer at once (a transport's receive buffer), and the bytes wait for the turn's end.
    const buf = Buffer.from(payload);
    // A handler subscribed on this node before this publish must receive it,
    // but SUBSCRIBE travels on the other connection: hold publishes until the
    // subscriptions in flight are acknowledged, then send them in order.
    if (this.pendingSubs > 0 || this.held.length > 0) {
      this.held.push([topic, buf]);
      return;
    }
    this.send(topic, buf);
  }

  subscribe(topic: string, handler: BusHandler): () => void {
    let set = this.topics.get(topic);
    if (!set) {
      this.topics.set(topic, (set = new Set()));
      // Left earlier in this turn and not yet sent: still subscribed in Redis, so nothing to send.
      if (!this.toUnsubscribe.delete(this.prefix + topic)) this.subscribeSoon(this.prefix + topic);
    }
    set.add(handler);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      set!.delete(handler);
      if (set!.size === 0 && this.topics.get(topic) === set) {
        this.topics.delete(topic);
        // Not sent yet: nothing to undo. Otherwise the UNSUBSCRIBE follows the SUBSCRIBE already sent.
        if (!this.toSubscribe.delete(this.prefix + topic)) this.subscribeSoon(this.prefix + topic, true);
      }
    };
  }

  /**
   * Queues a SUBSCRIBE (or an UNSUBSCRIBE) for the end of the turn; publishes are held from now
   * until it is acknowledged. A channel is never in both sets, so the two commands' order is free.
   */
  private subscribeSoon(channel: string, leave = false): void {
    if (!this.subscribeScheduled) {
      this.subscribeScheduled = true;
      this.pendingSubs++;
      setImmediate(() => {
        this.subscribeScheduled = false;
        const chans = [...this.toSubscribe];
        const gone = [...this.toUnsubscribe];
        this.toSubscribe.clear();
        this.toUnsubscribe.clear();
        this.pendingSubs--; // counted again by track
        if (gone.length) this.track(this.sub.unsubscribe(...gone));
        this.track(chans.length ? this.sub.subscribe(...chans) : Promise.resolve());
      });
    }
    (leave ? this.toUnsubscribe : this.toSubscribe).add(channel);
  }

  onReconnect(handler: () => void): () => void {
    this.reconnectHandlers.add(handler);
    return () => void this.reconnectHandlers.delete(handler);
  }

  healthy(): boolean {
    return this.client.status === 'ready' && this.sub.connected && this.pub.connected;
  }

  /** Resolves once every subscription made so far is active in Redis. */
  ready(): Promise<void> {
    if (this.pendingSubs === 0 && this.held.length === 0) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  async close(): Promise<void> {
    this.topics.clear();
    this.toSubscribe.clear();
    this.toUnsubscribe.clear();
    this.reconnectHandlers.clear();
    // Send what is held rather than drop it, then leave politely.
    this.pendingSubs = 0;
    this.flush();
    this.sendOutbox();
    await Promise.allSettled([this.pub.close(), this.client.quit(), this.sub.close()]);
  }

  /** Queues a publish (bytes of its own) for the end of this turn. */
  private send(topic: string, buf: Buffer): void {
    if (this.outbox.push([this.prefix + topic, buf]) === 1) setImmediate(() => this.sendOutbox());
  }

  /** The turn's publishes as one write, in the order they were made. */
  private sendOutbox(): void {
    const out = this.outbox;
    if (!out.length) return;
    this.outbox = [];
    this.pub.publishAll(out);
  }

  /** Publishes dropped since start: Redis unreachable longer than they are held, or not keeping up (metrics). */
  get droppedPublishes(): number {
    return this.pub.dropped;
  }

  private track(p: Promise<unknown>): void {
    this.pendingSubs++;
    const settle = () => {
      this.pendingSubs = Math.max(0, this.pendingSubs - 1);
      if (this.pendingSubs === 0) this.flush();
    };
    p.then(settle, (e) => {
      this.logError(e);
      settle();
    });
  }

  private flush(): void {
    const held = this.held.splice(0);
    for (const [t, b] of held) this.send(t, b);
    if (this.pendingSubs === 0) for (const r of this.idle.splice(0)) r();
  }

  /** `payload`: a plain Uint8Array view, as LocalBus hands out (MessagePack `bin` fields then decode alike on both). */
  private deliver(name: string, payload: Uint8Array): void {
    if (name === this.resyncChannel) return this.reconnected();
    if (!name.startsWith(this.prefix)) return;
    const set = this.topics.get(name.slice(this.prefix.length));
    if (!set) return;
    // One handler (the usual case) is called straight from the set: one leaving during the call is safe.
    for (const h of set.size === 1 ? set : [...set]) {
      try {
        h(payload);
      } catch (e) {
        // A failing subscriber must not stop delivery to the others.
        this.log?.warn('bus handler failed', { topic: name, err: e });
      }
    }
  }

  private logError(e: unknown): void {
    // A Redis outage raises one error per retry: log at most one per second.
    const now = Date.now();
    if (now - this.lastErrorLog < 1000) return;
    this.lastErrorLog = now;
    this.log?.warn('redis error', { err: e instanceof Error ? e.message : String(e) });
  }
}
