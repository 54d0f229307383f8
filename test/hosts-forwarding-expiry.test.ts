// A request sent on a host's channel that the host never answers is forgotten
// once its asker has given up, not five minutes later: a silent host (or one
// that answers nothing on purpose) must not pile up entries on its node.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { LocalBus } from '../src/bus/local.js';
import { RequestForwarding, type RequestMsg } from '../src/hosts/forwarding.js';
import type { HostConnection } from '../src/hosts/connection.js';

// The asker's timers are unref'd (a hub never waits on them to exit): this keeps the test's loop alive.
const alive = setInterval(() => {}, 1000);
after(() => clearInterval(alive));

function silentHost(sent: unknown[]): HostConnection {
  return { hostId: 'h1', send: (f: unknown) => (sent.push(f), true) } as unknown as HostConnection;
}

test('an unanswered forward is dropped once its asker timed out (plus a grace), and a late reply is ignored', async () => {
  const sent: Array<{ id: number }> = [];
  const conn = silentHost(sent);
  let fwd!: RequestForwarding;
  fwd = new RequestForwarding(new LocalBus(), 'n1', (_to, m: RequestMsg) => fwd.deliver(conn, m));
  try {
    const asked = fwd.ask('h1', 'n1', { t: 'dirs.list', path: '/' } as never, 30);
    await assert.rejects(asked, /HOST_TIMEOUT|did not answer|timed out/i);
    assert.equal(sent.length, 1);
    assert.equal(fwd.inFlight, 1, 'still held right after the asker gave up');
    fwd.dropStale(Date.now() + 60_000); // a minute on: the asker gave up long ago
    assert.equal(fwd.inFlight, 0, 'dropped after its asker timed out, not after 5 minutes');
    fwd.reply(conn, { t: 'reply', id: sent[0].id, ok: true, data: 1 } as never); // late: nothing to settle, no throw
  } finally {
    fwd.close();
  }
});

test('a forward still within its asker\'s time is kept', async () => {
  const sent: Array<{ id: number }> = [];
  const conn = silentHost(sent);
  let fwd!: RequestForwarding;
  fwd = new RequestForwarding(new LocalBus(), 'n1', (_to, m: RequestMsg) => fwd.deliver(conn, m));
  try {
    const asked = fwd.ask('h1', 'n1', { t: 'dirs.list', path: '/' } as never, 120_000);
    fwd.dropStale(Date.now() + 60_000);
    assert.equal(fwd.inFlight, 1);
    fwd.reply(conn, { t: 'reply', id: sent[0].id, ok: true, data: 'ok' } as never);
    assert.equal(await asked, 'ok');
    assert.equal(fwd.inFlight, 0);
  } finally {
    fwd.close();
  }
});

test('a forward is kept five minutes at most, whatever time its asker gave itself; one without a time (an older node\'s) as long', () => {
  const sent: Array<{ id: number }> = [];
  const conn = silentHost(sent);
  const fwd = new RequestForwarding(new LocalBus(), 'n1', () => {});
  try {
    const req = (rid: number, ttl?: number): RequestMsg => ({ k: 'req', h: 'h1', node: 'n2', rid, frame: { t: 'engines.refresh' }, ...(ttl === undefined ? {} : { ttl }) });
    fwd.deliver(conn, req(1, 10 ** 12));
    fwd.deliver(conn, req(2));
    fwd.deliver(conn, req(3, -5)); // not a time: as without one
    fwd.dropStale(Date.now() + 4 * 60_000);
    assert.equal(fwd.inFlight, 3, 'within five minutes');
    fwd.dropStale(Date.now() + 5 * 60_000 + 1000);
    assert.equal(fwd.inFlight, 0, 'none held past five minutes');
  } finally {
    fwd.close();
  }
});
