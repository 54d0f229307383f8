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
// One Redis instance carries every publish of a cluster, a delta each: with
// `shardUrls` (REDIS_SHARD_URLS) the keyed topics (`<kind>:<key>`: a session's
// events, a node's host frames) are spread by a hash of their name over more
// instances, with a publishing, a subscribing and a command connection to each
// (the last for presence keys, spread the same way by
// hosts/presence-sharded.ts); plain topics (`auth`, `agents`, …) and rate
// limits stay on the first. One topic lives on one instance, so its readers
// still see one order; no reader here relies on an order between two topics.
import { Redis } from 'ioredis';
import type { Bus, BusHandler } from './bus.js';
import type { Logger } from '../log.js';
import { RespPublisher } from './resp-publisher.js';
import { RespSubscriber } from './resp-subscriber.js';
import type { RespTarget } from './resp-connection.js';
import { shardOf } from '../shard-hash.js';

export interface RedisBusOptions {
  /** Prefix of every channel (and of keys other modules build with `key()`): lets hubs share one Redis. */
  prefix?: string;
  log?: Logger;
  /** How long start-up waits for Redis before giving up, ms. */
  connectTimeoutMs?: number;
  /**
   * More Redis instances for the keyed topics, hashed over them (REDIS_SHARD_URLS). Every node of a
   * cluster must list the same, in the same order: start-up refuses a list that differs from the
   * running nodes' (the key `bus:layout`, kept while a node lives).
   */
  shardUrls?: string[];
  /** How often a node writes the shard layout again, ms (tests shorten it). */
  layoutRefreshMs?: number;
}

const NOTHING = new Uint8Array(0);
/** How long the shard layout is kept after the last node wrote it, and how often a node writes it. */
export const LAYOUT_TTL_MS = 30_000;
const LAYOUT_REFRESH_MS = 10_000;

/** Nodes that list different shards (not a Redis error). */
class LayoutMismatch extends Error {}

/** A publishing and a subscribing connection to one Redis instance. */
interface Link {
  pub: RespPublisher;
  sub: RespSubscriber;
  /** Publishes of this turn for this instance, not yet written (channel with prefix, own copy of the bytes). */
  outbox: Array<[string, Buffer]>;
  /** Channels to SUBSCRIBE / UNSUBSCRIBE at the end of this turn. */
  toSubscribe: Set<string>;
  toUnsubscribe: Set<string>;
}

/** Where a topic goes: 0, the first instance, for plain topics; keyed ones (`<kind>:<key>`) by FNV-1a of the name over the shards (1…shards). */
export function linkIndex(topic: string, shards: number): number {
  return shards === 0 || topic.indexOf(':') < 0 ? 0 : 1 + shardOf(topic, shards);
}

/** The address ioredis makes of a URL, as the RESP connections take it. */
function targetOf(conn: Redis, connectTimeout: number): RespTarget {
  const o = conn.options;
  return { host: o.host, port: o.port, path: o.path, family: o.family, username: o.username, password: o.password, tls: o.tls, connectTimeout };
}

/** The reserved channel on which a node announces that one of its Redis connections came back. */
export function resyncChannelOf(prefix: string): string {
  return prefix + '_bus:reconnected';
}

export class RedisBus implements Bus {
  readonly kind = 'redis' as const;
  /** The command connection, for other modules' keys and scripts. */
  readonly client: Redis;
  /** A command connection to each shard (presence keys are spread over them); empty without shards. */
  readonly shardClients: Redis[];
  /** The first instance's connections (plain topics, and every topic without shards), then one per shard. */
  private readonly links: Link[];
  private readonly shards: number;
  private readonly prefix: string;
  private readonly log?: Logger;
  private readonly topics = new Map<string, Set<BusHandler>>();
  /** SUBSCRIBE/UNSUBSCRIBE commands not yet acknowledged. */
  private pendingSubs = 0;
  private subscribeScheduled = false;
  /** Publishes held back while a subscription is in flight (see publish). */
  private held: Array<[string, Buffer]> = [];
  private idle: Array<() => void> = [];
  private lastErrorLog = 0;
  private reconnectHandlers = new Set<() => void>();
  private reconnectSoon = false;
  private readonly resyncChannel: string;
  private outboxScheduled = false;
  private layoutTimer?: NodeJS.Timeout;

  private constructor(url: string, opts: RedisBusOptions) {
    this.prefix = opts.prefix ?? '';
    this.log = opts.log;
    const common = { lazyConnect: true, connectTimeout: opts.connectTimeoutMs ?? 5000, maxRetriesPerRequest: 3 };
    this.client = new Redis(url, { ...common, connectionName: 'hub-cmd' });
    this.resyncChannel = resyncChannelOf(this.prefix);
    // The publishing and subscribing connections go where ioredis' parsing of the URL says.
    this.shardClients = (opts.shardUrls ?? []).map((u, i) => new Redis(u, { ...common, connectionName: `hub-cmd-shard-${i + 1}` }));
    const targets = [this.client, ...this.shardClients].map((c) => targetOf(c, common.connectTimeout));
    this.shards = targets.length - 1;
    this.links = targets.map((t) => this.makeLink(t));
    // Writes of a command connection that dropped may be lost (presence): every node resynchronises.
    for (const c of [this.client, ...this.shardClients]) {
      c.on('error', (e) => this.logError(e));
      this.afterDrop(c, () => this.links[0].pub.publishAll([[this.resyncChannel, NOTHING]]));
    }
  }

  private makeLink(target: RespTarget): Link {
    const logError = (e: unknown) => this.logError(e);
    // A connection that came back (or dropped publishes) says so on its own instance, which every node reads.
    const announce = () => l.pub.publishAll([[this.resyncChannel, NOTHING]]);
    const l: Link = {
      pub: new RespPublisher(target, { log: this.log, logError, reconnected: announce, lost: announce }),
      sub: new RespSubscriber(target, { logError, message: (channel, payload) => this.deliver(channel, payload), resubscribed: () => this.reconnected() }),
      outbox: [],
      toSubscribe: new Set(),
      toUnsubscribe: new Set(),
    };
    return l;
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

  /** Connects every connection; rejects when a Redis is unreachable, or the shards differ from the running nodes'. */
  static async connect(url: string, opts: RedisBusOptions = {}): Promise<RedisBus> {
    const bus = new RedisBus(url, opts);
    try {
      await Promise.all([bus.client.connect(), ...bus.shardClients.map((c) => c.connect()), ...bus.links.flatMap((l) => [l.sub.connect(), l.pub.connect()])]);
      await bus.claimLayout(true);
    } catch (e) {
      await bus.closeConnections();
      throw e;
    }
    for (const l of bus.links) bus.track(l.sub.subscribe(bus.resyncChannel));
    bus.layoutTimer = setInterval(() => void bus.claimLayout(false).catch((e) => (e instanceof LayoutMismatch ? bus.log?.error('redis shards differ between nodes', { err: e.message }) : bus.logError(e))), opts.layoutRefreshMs ?? LAYOUT_REFRESH_MS);
    bus.layoutTimer.unref();
    return bus;
  }

  /**
   * Every node must hash keyed topics over the same instances, or a publish goes where its readers
   * are not: the list (by address) is kept in Redis while any node lives, and a node whose list
   * differs refuses to start (`atStart`) or says so in its log.
   */
  private async claimLayout(atStart: boolean): Promise<void> {
    const mine = this.links.slice(1).map((l) => l.sub.address).join(',');
    const key = this.key('bus:layout');
    const theirs = (await this.client.set(key, mine, 'PX', LAYOUT_TTL_MS, 'NX')) ? mine : await this.client.get(key);
    if (theirs === null || theirs === mine) {
      if (!atStart) await this.client.set(key, mine, 'PX', LAYOUT_TTL_MS);
      return;
    }
    // What Redis holds is shown, at most 300 characters of it (a log line, not a dump).
    const say = (list: string) => (list ? (list.length > 300 ? list.slice(0, 300) + '…' : list) : 'none');
    throw new LayoutMismatch(`REDIS_SHARD_URLS: this node's Redis shards (${say(mine)}) differ from the running nodes' (${say(theirs)}); every node must list the same, in the same order (the list is forgotten ${LAYOUT_TTL_MS / 1000} s after the last node stops)`);
  }

  /** The publishing and subscribing connections to instance `i` (0: REDIS_URL's; then the shards): tests. */
  connections(i = 0): { readonly pub: RespPublisher; readonly sub: RespSubscriber } {
    return this.links[i];
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
      if (!this.linkOf(topic).toUnsubscribe.delete(topic)) this.subscribeSoon(topic);
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
        if (!this.linkOf(topic).toSubscribe.delete(topic)) this.subscribeSoon(topic, true);
      }
    };
  }

  private linkOf(topic: string): Link {
    return this.links[linkIndex(topic, this.shards)];
  }

  /**
   * Queues a SUBSCRIBE (or an UNSUBSCRIBE) for the end of the turn; publishes are held from now
   * until it is acknowledged. A topic is never in both sets, so the two commands' order is free.
   */
  private subscribeSoon(topic: string, leave = false): void {
    if (!this.subscribeScheduled) {
      this.subscribeScheduled = true;
      this.pendingSubs++;
      setImmediate(() => {
        this.subscribeScheduled = false;
        for (const l of this.links) {
          const chans = [...l.toSubscribe].map((t) => this.prefix + t);
          const gone = [...l.toUnsubscribe].map((t) => this.prefix + t);
          l.toSubscribe.clear();
          l.toUnsubscribe.clear();
          if (gone.length) this.track(l.sub.unsubscribe(...gone));
          if (chans.length) this.track(l.sub.subscribe(...chans));
        }
        this.track(Promise.resolve()); // settles the count taken above once the turn's commands are counted
        this.pendingSubs--;
      });
    }
    const l = this.linkOf(topic);
    (leave ? l.toUnsubscribe : l.toSubscribe).add(topic);
  }

  onReconnect(handler: () => void): () => void {
    this.reconnectHandlers.add(handler);
    return () => void this.reconnectHandlers.delete(handler);
  }

  healthy(): boolean {
    return this.client.status === 'ready' && this.shardClients.every((c) => c.status === 'ready') && this.links.every((l) => l.sub.connected && l.pub.connected);
  }

  /** Resolves once every subscription made so far is active in Redis. */
  ready(): Promise<void> {
    if (this.pendingSubs === 0 && this.held.length === 0) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  async close(): Promise<void> {
    clearInterval(this.layoutTimer);
    this.topics.clear();
    this.reconnectHandlers.clear();
    for (const l of this.links) {
      l.toSubscribe.clear();
      l.toUnsubscribe.clear();
    }
    // Send what is held rather than drop it, then leave politely.
    this.pendingSubs = 0;
    this.flush();
    this.sendOutbox();
    await Promise.allSettled([this.client.quit(), ...this.shardClients.map((c) => c.quit()), ...this.links.flatMap((l) => [l.pub.close(), l.sub.close()])]);
  }

  /** Drops every connection at once (start-up failed). */
  private async closeConnections(): Promise<void> {
    for (const c of [this.client, ...this.shardClients]) c.disconnect();
    await Promise.all(this.links.flatMap((l) => [l.sub.close(), l.pub.close()]));
  }

  /** Queues a publish (bytes of its own) for the end of this turn, with the others for its instance. */
  private send(topic: string, buf: Buffer): void {
    this.linkOf(topic).outbox.push([this.prefix + topic, buf]);
    if (this.outboxScheduled) return;
    this.outboxScheduled = true;
    setImmediate(() => this.sendOutbox());
  }

  /** The turn's publishes as one write per instance, in the order they were made. */
  private sendOutbox(): void {
    this.outboxScheduled = false;
    for (const l of this.links) {
      const out = l.outbox;
      if (!out.length) continue;
      l.outbox = [];
      l.pub.publishAll(out);
    }
  }

  /** Publishes dropped since start: Redis unreachable longer than they are held, or not keeping up (metrics). */
  get droppedPublishes(): number {
    let n = 0;
    for (const l of this.links) n += l.pub.dropped;
    return n;
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
