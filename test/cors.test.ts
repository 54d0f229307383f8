// Issue 13, part 4: CORS for consoles and clients served from another origin
// (ALLOWED_ORIGINS, none by default), `Allow` on 405 and `WWW-Authenticate` on 401.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { loadConfig, ConfigError } from '../src/config.js';
import { seedHost } from './helpers/seed.js';

const CONSOLE = 'https://console.example.com';
const OTHER = 'https://evil.example.net';

let t: TestHub;
let plain: TestHub;
before(async () => {
  t = await startTestHub({ allowedOrigins: [CONSOLE, 'http://localhost:5173'] });
  plain = await startTestHub();
});
after(async () => {
  await t.close();
  await plain.close();
});

const preflight = (hub: TestHub, path: string, origin: string, method = 'POST', headers = 'authorization, content-type') =>
  fetch(hub.url + path, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers } });

test('ALLOWED_ORIGINS: comma-separated exact origins; unset → none; a malformed entry is a ConfigError naming the variable', () => {
  assert.deepEqual(loadConfig({}).allowedOrigins, []);
  assert.deepEqual(loadConfig({ ALLOWED_ORIGINS: ' https://a.example.com, http://localhost:5173 ,' }).allowedOrigins, ['https://a.example.com', 'http://localhost:5173']);
  for (const bad of ['*', 'a.example.com', 'https://a.example.com/', 'https://a.example.com/console', 'ftp://a.example.com', 'https://a.example.com?x=1', 'null']) {
    assert.throws(() => loadConfig({ ALLOWED_ORIGINS: bad }), (e: unknown) => e instanceof ConfigError && /ALLOWED_ORIGINS/.test(e.message), bad);
  }
});

test('a preflight from an allowed origin: 204 with the origin echoed, methods, headers, max-age and Vary', async () => {
  const r = await preflight(t, '/api/v1/sessions', CONSOLE, 'POST', 'Authorization, Content-Type, Last-Event-ID');
  assert.equal(r.status, 204);
  assert.equal(r.headers.get('access-control-allow-origin'), CONSOLE);
  const methods = (r.headers.get('access-control-allow-methods') ?? '').split(/,\s*/);
  for (const m of ['GET', 'POST']) assert.ok(methods.includes(m), m);
  const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
  for (const h of ['authorization', 'content-type', 'last-event-id', 'idempotency-key']) assert.ok(allowed.includes(h), h);
  assert.match(r.headers.get('access-control-max-age') ?? '', /^\d+$/);
  assert.match(r.headers.get('vary') ?? '', /Origin/);
  assert.equal(r.headers.get('access-control-allow-credentials'), null, 'bearer tokens, not cookies');
  // No authentication is asked of a preflight (browsers never send credentials with one).
  const other = await preflight(t, '/api/v1/admin/users', 'http://localhost:5173', 'DELETE');
  assert.equal(other.status, 204);
  assert.equal(other.headers.get('access-control-allow-origin'), 'http://localhost:5173');
});

test('a preflight from an origin not listed, or on a hub without ALLOWED_ORIGINS, gets no CORS headers', async () => {
  for (const [hub, origin] of [[t, OTHER], [t, CONSOLE + ':8443'], [t, 'https://console.example.com.evil.net'], [plain, CONSOLE]] as Array<[TestHub, string]>) {
    const r = await preflight(hub, '/api/v1/sessions', origin);
    assert.ok(r.status === 204 || r.status === 403, `${origin}: ${r.status}`);
    assert.equal(r.headers.get('access-control-allow-origin'), null, origin);
    assert.equal(r.headers.get('access-control-allow-methods'), null, origin);
  }
});

test('a preflight of an unknown path is the usual 404', async () => {
  const r = await preflight(t, '/api/v1/no-such-thing', CONSOLE);
  assert.equal(r.status, 404);
});

test('answers to an allowed origin carry the origin, Vary and the exposed headers; others carry none', async () => {
  const ok = await fetch(t.url + '/api/v1/me', { headers: { Origin: CONSOLE, Authorization: `Bearer ${t.adminKey}` } });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('access-control-allow-origin'), CONSOLE);
  assert.match(ok.headers.get('vary') ?? '', /Origin/);
  const exposed = (ok.headers.get('access-control-expose-headers') ?? '').toLowerCase();
  for (const h of ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'www-authenticate']) assert.ok(exposed.includes(h), h);
  // Errors too: a browser client must be able to read the envelope of a 401.
  const denied = await fetch(t.url + '/api/v1/me', { headers: { Origin: CONSOLE } });
  assert.equal(denied.status, 401);
  assert.equal(denied.headers.get('access-control-allow-origin'), CONSOLE);
  const none = await fetch(t.url + '/api/v1/me', { headers: { Origin: OTHER, Authorization: `Bearer ${t.adminKey}` } });
  assert.equal(none.status, 200);
  assert.equal(none.headers.get('access-control-allow-origin'), null);
  assert.equal(none.headers.get('access-control-expose-headers'), null);
  const off = await fetch(plain.url + '/api/v1/me', { headers: { Origin: CONSOLE, Authorization: `Bearer ${plain.adminKey}` } });
  assert.equal(off.headers.get('access-control-allow-origin'), null);
});

test('an event stream to an allowed origin carries the CORS headers too', async () => {
  const me = await t.api('GET', '/api/v1/me', { token: t.adminKey });
  const hostId = await seedHost(t, me.body.data.id);
  const agent = await t.api('POST', '/api/v1/agents', { token: t.adminKey, body: { name: 'cors', scope: 'private', hostId, engine: 'claude-code' } });
  assert.equal(agent.status, 201, agent.text);
  const s = await t.api('POST', '/api/v1/sessions', { token: t.adminKey, body: { agentId: agent.body.data.id } });
  assert.equal(s.status, 201, s.text);
  const ctl = new AbortController();
  const r = await fetch(`${t.url}/api/v1/sessions/${s.body.data.id}/events`, { headers: { Origin: CONSOLE, Authorization: `Bearer ${t.adminKey}` }, signal: ctl.signal });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.equal(r.headers.get('access-control-allow-origin'), CONSOLE);
  assert.match(r.headers.get('vary') ?? '', /Origin/);
  ctl.abort();
});

test('405 carries Allow with the methods of the path', async () => {
  const r = await fetch(t.url + '/api/v1/me/keys', { method: 'PUT', headers: { Authorization: `Bearer ${t.adminKey}` } });
  assert.equal(r.status, 405);
  const allow = (r.headers.get('allow') ?? '').split(/,\s*/);
  for (const m of ['GET', 'POST']) assert.ok(allow.includes(m), `${m} in ${allow}`);
  assert.ok(!allow.includes('PUT'));
  const body = await r.json();
  assert.equal(body.code, '4050');
  const doc = (await t.api('GET', '/api/v1/openapi.json')).body;
  assert.ok(doc.components.responses.Error405.headers.Allow);
  assert.ok(doc.components.responses.Error401.headers['WWW-Authenticate']);
});

test('401 carries WWW-Authenticate: Bearer realm, with error= when a credential was sent and refused', async () => {
  const missing = await fetch(t.url + '/api/v1/me');
  assert.equal(missing.status, 401);
  assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="agent-hub"');
  const bad = await fetch(t.url + '/api/v1/me', { headers: { Authorization: 'Bearer ahk_not-a-real-key' } });
  assert.equal(bad.status, 401);
  assert.match(bad.headers.get('www-authenticate') ?? '', /^Bearer realm="agent-hub", error="invalid_token"/);
  const malformed = await fetch(t.url + '/api/v1/me', { headers: { Authorization: 'Basic Zm9vOmJhcg==' } });
  assert.equal(malformed.status, 401);
  assert.match(malformed.headers.get('www-authenticate') ?? '', /^Bearer realm="agent-hub", error="invalid_request"/);
});
