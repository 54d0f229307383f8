// A host's channel under backpressure (src/hosts/connection.ts), with a stub socket: past the socket's high
// water frames wait in the channel's queue and go out in order as it drains; a host that lets more than the
// queue's bound pile up is not reading and is closed (4429), so the hub never buffers without bound for it.
// Audit by mutation (fifty-second session): removing the bound left the suite green.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostConnection, type ChannelOwner, type Socket } from '../src/hosts/connection.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import { CloseCodes } from '../host-protocol/version.js';

const MiB = 1024 * 1024;

/** A socket whose kernel-side buffer holds `buffered` bytes until the test says it drained. */
function stubSocket(conn: () => HostConnection) {
  const s = {
    buffered: 0,
    sent: [] as Uint8Array[],
    ended: undefined as number | undefined,
    send(m: Uint8Array) {
      s.sent.push(m.slice());
      s.buffered += m.byteLength;
      return 1;
    },
    getBufferedAmount: () => s.buffered,
    end(code: number) {
      s.ended = code;
      conn().closed(code); // uWS calls the close handler synchronously
    },
  };
  return s satisfies Socket;
}

function channel() {
  const closed: HostConnection[] = [];
  const owner: ChannelOwner = { hello() {}, run() {}, reply() {}, engines() {}, closed: (c) => void closed.push(c) };
  const c = new HostConnection(owner, { hostId: 'hst_bp', userId: 'usr_bp' });
  const s = stubSocket(() => c);
  c.open(s);
  return { c, s, closed };
}

/** A run.start of about `bytes` bytes (its prompt). */
const frame = (i: number, bytes: number) => ({
  t: 'run.start' as const, runId: `run_${i + 1}`, sessionId: 'ses_bp', engine: 'claude-code', prompt: 'p'.repeat(bytes), workDir: '', mode: 'default',
});

test('frames past the high water wait in order and go out as the socket drains', () => {
  const { c, s } = channel();
  for (let i = 0; i < 20; i++) assert.equal(c.send(frame(i, 64 * 1024)), true);
  const first = s.sent.length;
  assert.ok(first > 0 && first < 20, `some frames went out, the rest wait (${first} sent)`);
  for (let k = 0; k < 100 && s.sent.length < 20; k++) {
    s.buffered = 0; // the host read what was buffered
    c.drain();
  }
  assert.deepEqual(s.sent.map((m) => (decodeHubFrame(m).frame as { runId: string }).runId), Array.from({ length: 20 }, (_, i) => `run_${i + 1}`));
  assert.equal(s.ended, undefined, 'a host that reads is not closed');
});

test('a host that lets more than the queue bound pile up is closed with BACKPRESSURE, and nothing more is queued for it', () => {
  const { c, s, closed } = channel();
  let i = 0;
  while (s.ended === undefined && i < 1000) c.send(frame(i++, 64 * 1024));
  assert.equal(s.ended, CloseCodes.BACKPRESSURE.code, `closed after ${i} frames of 64 KiB`);
  assert.ok(i * 64 * 1024 > 8 * MiB && i * 64 * 1024 < 9 * MiB, `closed once the queue passed 8 MiB (${i} frames)`);
  assert.deepEqual(closed, [c], 'the owner is told');
  const sent = s.sent.length;
  assert.equal(c.send(frame(i, 10)), false, 'a closed channel takes no more frames');
  c.drain();
  assert.equal(s.sent.length, sent);
});
