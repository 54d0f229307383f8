// A path id is checked before it reaches a query: a NUL byte (PostgreSQL
// refuses it: the hub answered 500), any control character, or an id longer
// than any the hub makes → 400 4003, never a 5xx.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const PATHS = ['/api/v1/sessions/{id}/messages', '/api/v1/orders/{id}', '/api/v1/agents/{id}', '/api/v1/hosts/{id}', '/api/v1/model-configs/{id}', '/api/v1/me/redeems/{id}'];
const BAD = ['%00', 'a%00b', '%1F', '%7F', 'x'.repeat(201)];

test('control characters and over-long ids in a path → 400 4003 on every id route tried, never 5xx', async () => {
  const u = await t.user();
  for (const p of PATHS) {
    for (const id of BAD) {
      const r = await t.api('GET', p.replace('{id}', id), { token: u.key });
      assert.equal(r.status, 400, `${p} with ${id.slice(0, 10)}: ${r.status} ${r.text}`);
      assert.equal(r.body.code, '4003');
    }
    // An ordinary unknown id is still a plain 404.
    assert.equal((await t.api('GET', p.replace('{id}', 'nope_123'), { token: u.key })).status, 404, p);
  }
  assert.equal((await t.api('GET', `/api/v1/agents/${'a'.repeat(120)}`)).status, 404, 'the spec\'s longest id (120) is still looked up');
});
