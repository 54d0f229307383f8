// Issue 14, faults on the host channel: a host that stops reading its socket
// is closed for backpressure instead of the hub buffering without bound, its
// turns fail visibly, and the hub goes on. Covered elsewhere: a host dropping
// mid-turn (sessions-e2e.test.ts: run.error, the session stays usable;
// security-run-frames.test.ts: the reconnected host speaks for its open runs),
// an SSE reader that stops reading (security-sse.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hubWithHosts } from './helpers/hosts-hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import { ApiError, type AcceptedRun, type Client } from '../src/client/index.js';

const s = hubWithHosts();

async function agentFor(c: Client, hostId: string, name: string): Promise<string> {
  const a = await agentWhenReady(c, { name, scope: 'private', hostId, engine: 'claude-code' }, 10_000);
  return a.id;
}

test('a host that stops reading is closed for backpressure; its turns fail visibly; the hub goes on', { timeout: 90_000 }, async () => {
  const { t, hosts } = s;
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'stalls');
  const host = await connectFakeHost(t, credential, { capacity: 250 });
  hosts.push(host);
  const c = t.client(u.key);
  const agentId = await agentFor(c, hostId, 'stalls');
  // The host stops reading its socket: run.start frames (99 KB prompts, up to 25 MB) pile up at the hub.
  (host.ws as any)._socket.pause();
  const big = 'x'.repeat(99_000);
  const sessions: string[] = [];
  for (let i = 0; i < 250; i++) {
    let r: AcceptedRun;
    try {
      r = (await c.sessions.create({ agentId, content: big })) as AcceptedRun;
    } catch (e) {
      if (e instanceof ApiError && e.status === 503) break; // once the hub closed the channel, the host is offline
      throw e;
    }
    assert.ok(['processing', 'queued'].includes(r.status), JSON.stringify(r).slice(0, 300));
    sessions.push(r.sessionId);
  }
  assert.ok(sessions.length > 0);
  await eventually(async () => (await c.hosts.get(hostId)).status === 'offline', 30_000, 100);
  (host.ws as any)._socket.resume();
  const closed = await host.closed;
  assert.ok([4429, 1006].includes(closed.code), `closed with ${closed.code} ${closed.reason}`);
  // The turns it held end as errors (run.error), none stays processing.
  await eventually(async () => {
    const r = await c.sessions.list({ pageSize: 50 });
    return r.items.filter((s) => sessions.includes(s.id)).every((s) => s.status === 'active');
  }, 30_000, 200);
  assert.equal((await t.client().health()).status, 'ok');
});
