// What a hostile or misconfigured hub can make of the host's channel. The hub names the host's ping
// interval in welcome.heartbeatMs; the schema sets only a minimum, and Node runs a setInterval of
// 2^31 ms or more every millisecond: the host holds the interval to its own bound. A frame past the
// frame bound is refused by the host's socket (ws took up to 100 MiB), and one the host cannot read
// is decoded for its id only within the same bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from '@msgpack/msgpack';
import { Channel, pingIntervalMs, HEARTBEAT_MAX_MS } from '../src/host-cli/channel.js';
import { FRAME_MAX_BYTES } from '../host-protocol/limits.js';
import { startMiniHub } from './helpers/mini-hub.js';

test('a heartbeat past the host\'s bound is held to it, never to the 1 ms loop Node makes of 2^31', () => {
  assert.equal(pingIntervalMs(2 ** 31), HEARTBEAT_MAX_MS);
  assert.equal(pingIntervalMs(Number.MAX_SAFE_INTEGER), HEARTBEAT_MAX_MS);
  assert.ok(HEARTBEAT_MAX_MS < 2 ** 31 - 1);
});

test('a heartbeat within bounds is kept as the hub sent it', () => {
  assert.equal(pingIntervalMs(5000), 5000);
  assert.equal(pingIntervalMs(1000), 1000);
});

test('a hub frame past the frame bound closes the host\'s socket (1009) instead of being buffered; the host reconnects', async (t) => {
  const hub = await startMiniHub();
  t.after(() => hub.close());
  const statuses: string[] = [];
  let ups = 0;
  let up: () => void = () => {};
  const ch = new Channel({ hub: hub.url, credential: 'ahh_x', name: 'h', capacity: 1, engines: () => [], running: () => [], onFrame: () => {}, status: (l) => statuses.push(l), onUp: () => (ups++, up()) });
  t.after(() => ch.stop());
  await new Promise<void>((r) => ((up = r), ch.start()));
  const closed = new Promise<number>((r) => hub.socket()!.once('close', (code) => r(code)));
  hub.socket()!.send(Buffer.alloc(FRAME_MAX_BYTES + 1024, 0xc0));
  assert.equal(await closed, 1009);
  await new Promise<void>((r) => (ups > 1 ? r() : (up = r)));
});

test('a frame the host cannot read is answered unsupported by its id; one past the decoder\'s bounds is dropped', async (t) => {
  const hub = await startMiniHub();
  t.after(() => hub.close());
  let up: () => void = () => {};
  const ch = new Channel({ hub: hub.url, credential: 'ahh_x', name: 'h', capacity: 1, engines: () => [], running: () => [], onFrame: () => {}, status: () => {}, onUp: () => up() });
  t.after(() => ch.stop());
  await new Promise<void>((r) => ((up = r), ch.start()));
  hub.socket()!.send(encode({ t: 'future.thing', id: 7, junk: 'x'.repeat(1_500_000) })); // a string past the bound: not even its id is read
  hub.socket()!.send(encode({ t: 'future.thing', id: 8 }));
  const reply = await hub.frames.until((f) => f.t === 'reply', 5000, () => hub.refused.join());
  assert.equal((reply as { id: number }).id, 8);
  assert.equal(hub.frames.items.filter((f) => f.t === 'reply').length, 1);
});
