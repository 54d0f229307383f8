// Hole 16 of the security review: a second hub on a port that is already in
// use must fail to start with a clear message (exclusive bind), instead of
// sharing the port through SO_REUSEPORT and splitting traffic between two
// databases. The fixed-port fast restart (test/restart-port.test.ts) still works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, startTestHubOnFixedPort } from './helpers/hub.js';

test('a second hub on a port already in use fails to start with a clear message', async () => {
  const a = await startTestHubOnFixedPort();
  const port = a.hub.port;
  try {
    await assert.rejects(startTestHub({ port }), (e: Error) => {
      assert.match(e.message, new RegExp(`port ${port}`));
      assert.match(e.message, /in use/);
      return true;
    });
    // The first hub still answers alone.
    assert.equal((await a.api('GET', '/api/v1/health')).status, 200);
  } finally {
    await a.close();
  }
});
