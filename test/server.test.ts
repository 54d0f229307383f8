import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ bodyLimit: 4096 });
});
after(() => t.close());

test('unknown path → 404 envelope; wrong method → 405 envelope', async () => {
  const r = await t.api('GET', '/api/v1/does-not-exist');
  assert.equal(r.status, 404);
  assert.deepEqual(Object.keys(r.body).sort(), ['code', 'data', 'message']);
  assert.equal(r.body.data, null);
  const m = await t.api('PUT', '/api/v1/me');
  assert.equal(m.status, 405);
  assert.equal(m.body.data, null);
});

test('oversize body → 413 envelope, by Content-Length and by bytes received', async () => {
  const big = JSON.stringify({ name: 'x'.repeat(10_000) });
  const r = await t.api('POST', '/api/v1/me/keys', { token: t.adminKey, raw: big, headers: { 'content-type': 'application/json' } });
  assert.equal(r.status, 413);
  assert.equal(r.body.code, '4130');
  // Chunked upload: no Content-Length, so the byte count decides.
  const chunks = new ReadableStream({
    start(c) {
      for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('x'.repeat(1000)));
      c.close();
    },
  });
  const res = await fetch(t.url + '/api/v1/me/keys', { method: 'POST', body: chunks, duplex: 'half', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` } } as any);
  assert.equal(res.status, 413);
});

test('malformed percent-encoding in a path parameter → 400', async () => {
  const r = await t.api('DELETE', '/api/v1/me/keys/%E0%A4%A', { token: t.adminKey });
  assert.equal(r.status, 400);
});

test('a required body that is missing → 400', async () => {
  const r = await t.api('POST', '/api/v1/me/keys', { token: t.adminKey });
  assert.equal(r.status, 400);
});
