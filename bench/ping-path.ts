// What answering one heartbeat costs the hub's JavaScript, beside the path it
// replaced: the general path (decode, schema check, the handler's pong frame,
// encode) and the fast path (host-protocol/ping.ts: recognise the CLI's plain
// ping, change one letter), each over the same ping, alternating rounds in one
// process. The socket's share (uWS, the kernel) is the same for both and not
// in these figures; bench/hosts-cluster.ts measures the whole.
//
//   npx tsx bench/ping-path.ts        (PING_N=1000000 per round, PING_ROUNDS=3; prints only)
import { decodeHostFrame, encodeFrame } from '../host-protocol/codec.js';
import { isPlainPing, pingToPong } from '../host-protocol/ping.js';
import { runIfMain } from './main.js';

const N = Number(process.env.PING_N ?? 1_000_000);
const ROUNDS = Number(process.env.PING_ROUNDS ?? 3);

export function run(): Record<'general' | 'fast', number[]> {
  const ping = encodeFrame({ t: 'ping', id: 12_345, ts: Date.now() }).slice();
  const general = () => {
    const d = decodeHostFrame(ping);
    return d.frame?.t === 'ping' ? encodeFrame({ t: 'pong', id: d.frame.id, ts: d.frame.ts }) : undefined;
  };
  const fast = () => {
    const b = new Uint8Array(ping.buffer, ping.byteOffset, ping.byteLength); // the view the transport makes
    if (!isPlainPing(b)) return undefined;
    pingToPong(b);
    b[5] = 0x69; // back to "ping" for the next turn
    return b;
  };
  const out = { general: [] as number[], fast: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, f] of [['general', general], ['fast', fast]] as const) {
      const t0 = performance.now();
      for (let i = 0; i < N; i++) f();
      out[name].push(((performance.now() - t0) * 1000) / N);
    }
  }
  return out;
}

runIfMain(import.meta.url, async () => {
  const r = run();
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(' / ');
  console.log(`µs per ping, ${ROUNDS} alternating rounds of ${N}: general path ${fmt(r.general)}; fast path ${fmt(r.fast)}`);
});
