// What one bus message costs a node's CPU on its way through Redis, with
// ioredis beside the bus's own RESP connections (src/bus/resp-publisher.ts,
// resp-subscriber.ts), alternating rounds in one process against the same
// Redis:
//  - publish: turns of BATCH publishes (a cluster node's outbox per
//    event-loop turn), through an ioredis pipeline (a lone publish as itself,
//    as RedisBus did) beside RespPublisher.publishAll; CPU per publish until
//    every reply is in;
//  - receive: N messages published by a raw socket, received through an ioredis
//    subscriber ('messageBuffer', the channel as a string and a view of the
//    payload, as RedisBus did) beside RespSubscriber; CPU per message of this
//    process, the raw publisher's writes included for both.
//
//   REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/redis-wire.ts   (WIRE_N=100000, WIRE_BATCH=2, WIRE_BYTES=180, WIRE_ROUNDS=3; prints only)
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RespPublisher, encodePublishes } from '../src/bus/resp-publisher.js';
import { RespSubscriber } from '../src/bus/resp-subscriber.js';
import { runIfMain } from './main.js';

const N = Number(process.env.WIRE_N ?? 100_000);
const BATCH = Number(process.env.WIRE_BATCH ?? 2);
const BYTES = Number(process.env.WIRE_BYTES ?? 180);
const ROUNDS = Number(process.env.WIRE_ROUNDS ?? 3);

const cpuUs = (t0: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(t0);
  return u.user + u.system;
};
const nextTurn = () => new Promise((r) => setImmediate(r));

async function publishIoredis(url: string, channel: string, payload: Buffer): Promise<number> {
  const c = new Redis(url);
  await c.ping();
  const t0 = process.cpuUsage();
  const replies: Array<Promise<unknown>> = [];
  for (let done = 0; done < N; done += BATCH) {
    if (BATCH === 1) replies.push(c.publish(channel, payload));
    else {
      const p = c.pipeline();
      for (let i = 0; i < BATCH; i++) p.publish(channel, payload);
      replies.push(p.exec());
    }
    await nextTurn();
  }
  await Promise.all(replies);
  const us = cpuUs(t0) / N;
  c.disconnect();
  return us;
}

async function publishResp(url: string, channel: string, payload: Buffer): Promise<number> {
  const pub = new RespPublisher(targetOf(url), { logError: (e) => console.error(e) });
  await pub.connect();
  const batch = Array.from({ length: BATCH }, () => [channel, payload] as const);
  const t0 = process.cpuUsage();
  for (let done = 0; done < N; done += BATCH) {
    pub.publishAll(batch);
    await nextTurn();
  }
  await pub.settled(60_000);
  const us = cpuUs(t0) / N;
  await pub.close();
  return us;
}

/** Publishes N messages to `channel` from a raw socket, 100 per write. */
async function flood(url: string, channel: string, payload: Buffer): Promise<net.Socket> {
  const u = new URL(url);
  const s = net.connect(Number(u.port || 6379), u.hostname);
  await new Promise((r) => s.once('connect', r));
  s.on('data', () => {});
  const hundred = encodePublishes(Array.from({ length: 100 }, () => [channel, payload] as const));
  for (let i = 0; i < N; i += 100) {
    s.write(hundred);
    if (i % 5000 === 0) await new Promise((r) => setTimeout(r, 1));
  }
  return s;
}

/**
 * CPU per message received while N messages are flooded to `channel`: `listen` subscribes, calling
 * `got` per message with its channel and a view of its payload, and returns how to leave.
 */
async function receive(url: string, channel: string, payload: Buffer, listen: (got: (name: string, view: Uint8Array) => void) => Promise<() => unknown>): Promise<number> {
  let n = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const leave = await listen((name, view) => {
    if (name && view.length && ++n === N) done();
  });
  const t0 = process.cpuUsage();
  const s = await flood(url, channel, payload);
  await all;
  const us = cpuUs(t0) / N;
  s.destroy();
  await leave();
  return us;
}

const receiveIoredis = (url: string, channel: string, payload: Buffer) =>
  receive(url, channel, payload, async (got) => {
    const sub = new Redis(url);
    sub.on('messageBuffer', (c: Buffer, m: Buffer) => got(c.toString('utf8'), new Uint8Array(m.buffer, m.byteOffset, m.byteLength)));
    await sub.subscribe(channel);
    return () => sub.disconnect();
  });

const receiveResp = (url: string, channel: string, payload: Buffer) =>
  receive(url, channel, payload, async (got) => {
    const sub = new RespSubscriber(targetOf(url), { logError: (e) => console.error(e), message: got, resubscribed: () => {} });
    await sub.connect();
    await sub.subscribe(channel);
    return () => sub.close();
  });

/** Where the bus's RESP connections go for `url`, as RedisBus takes it from ioredis' parsing. */
function targetOf(url: string) {
  const o = new Redis(url, { lazyConnect: true }).options;
  return { host: o.host, port: o.port, path: o.path, username: o.username, password: o.password, tls: o.tls };
}

export async function run(url: string): Promise<Record<string, number[]>> {
  const payload = randomBytes(BYTES);
  const channel = `bench-wire:${randomBytes(4).toString('hex')}`;
  const out: Record<string, number[]> = { 'publish ioredis': [], 'publish resp': [], 'receive ioredis': [], 'receive resp': [] };
  for (let r = 0; r < ROUNDS; r++) {
    out['publish ioredis'].push(await publishIoredis(url, channel, payload));
    out['publish resp'].push(await publishResp(url, channel, payload));
    out['receive ioredis'].push(await receiveIoredis(url, channel, payload));
    out['receive resp'].push(await receiveResp(url, channel, payload));
  }
  return out;
}

runIfMain(import.meta.url, async () => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set');
  const out = await run(url);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`CPU µs per bus message, ${N} per round, ${BYTES}-byte payloads, publishes in turns of ${BATCH}; rounds alternate (median, then each round):`);
  for (const [k, v] of Object.entries(out)) console.log(`  ${k.padEnd(16)} ${median(v).toFixed(2).padStart(6)}   (${v.map((x) => x.toFixed(2)).join(', ')})`);
  console.log(`  publish: resp/ioredis ${(median(out['publish resp']) / median(out['publish ioredis'])).toFixed(2)}; receive: resp/ioredis ${(median(out['receive resp']) / median(out['receive ioredis'])).toFixed(2)}`);
});
