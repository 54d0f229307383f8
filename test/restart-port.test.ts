// uSockets sets SO_REUSEADDR only on a listener with a fixed port; a hub that
// closed its host channels must be able to listen again on that port at once
// (a restart under a process supervisor), even with the server-side sockets
// in TIME_WAIT.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, startTestHubOnFixedPort } from './helpers/hub.js';
import { pairHost, connectFakeHost } from './helpers/host.js';

test('a hub restarted on the same fixed port listens again at once after closing host channels', async () => {
  const a = await startTestHubOnFixedPort();
  const port = a.hub.port;
  const u = await a.user();
  const { credential } = await pairHost(a, u.key);
  const host = await connectFakeHost(a, credential, {});
  assert.ok(host);
  await a.hub.close();
  const b = await startTestHub({ port, databaseUrl: a.config.databaseUrl, dataDir: ':memory:' });
  try {
    assert.equal(b.hub.port, port);
    assert.equal((await b.api('GET', '/api/v1/health')).status, 200);
  } finally {
    await b.close();
    await a.close().catch(() => undefined);
  }
});
