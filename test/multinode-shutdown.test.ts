// Graceful shutdown of a hub process: SIGTERM closes host channels with 1001
// GOING_AWAY (the host reconnects elsewhere), ends open SSE streams with a
// final `shutdown` frame, and exits 0 within SHUTDOWN_TIMEOUT_MS. Runs on
// PostgreSQL when DATABASE_URL is set, else on the embedded database.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestDatabase } from './helpers/hub.js';
import { startNode, call, type HubNode } from './helpers/nodes.js';
import { pairHost, connectFakeHost, eventually } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import { CloseCodes } from '../host-protocol/version.js';

let node: HubNode | undefined;
let drop: (() => Promise<void>) | undefined;
after(async () => {
  node?.kill('SIGKILL');
  await node?.exited;
  await drop?.();
});

test('SIGTERM: hosts told to go away, SSE streams end with a final frame, exit within the bound', { timeout: 90_000 }, async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  const adminKey = 'ahk_' + randomBytes(20).toString('hex');
  const BOUND = 4000;
  node = await startNode('node-stop', {
    ...(db.url ? { DATABASE_URL: db.url, SECRET_KEY: 'stop-' + randomBytes(8).toString('hex') } : {}),
    ADMIN_API_KEY: adminKey,
    REDIS_URL: '', // one node: the in-process bus
    SHUTDOWN_TIMEOUT_MS: String(BOUND),
  });
  const health = await call(node.url, 'GET', '/api/v1/health');
  assert.equal(health.status, 200);
  assert.deepEqual(health.body, { status: 'ok', node: 'node-stop', db: 'ok', bus: 'local' });
  const u = await call(node.url, 'POST', '/api/v1/admin/users', { token: adminKey, body: { name: 'stopper' } });
  const key: string = u.body.data.apiKey;
  const { credential } = await pairHost(node, key);
  const host = await connectFakeHost(node, credential);
  const agent = await eventually(async () => {
    const r = await call(node!.url, 'POST', '/api/v1/agents', { token: key, body: { name: 'stop', scope: 'private', hostId: host.hostId, engine: 'claude-code', workDir: 'w' } });
    return r.status === 201 ? r.body.data : undefined;
  }, 10_000, 50);
  // A turn that stays open: the fake host never ends it.
  const sse = await openSse(`${node.url}/api/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId: agent.id, content: 'keep going' }),
  });
  assert.equal(sse.status, 200, sse.text);
  await host.next((f) => f.t === 'run.start');
  await sse.until((f) => f.event === 'accepted');

  const t0 = Date.now();
  node.kill('SIGTERM');
  const closed = await host.closed;
  assert.equal(closed.code, CloseCodes.GOING_AWAY.code, 'the host is told to reconnect elsewhere');
  const last = await sse.until((f) => f.event === 'shutdown', 5000);
  assert.equal(last.data.reconnect, true);
  await sse.ended;
  assert.equal(await node.exited, 0);
  const took = Date.now() - t0;
  assert.ok(took < BOUND, `exited after ${took} ms (bound ${BOUND} ms)`);
  // Nothing listens any more.
  await assert.rejects(fetch(`${node.url}/api/v1/health`));
});
