// The request wrapper answers a step that needs no await inside uWS's request
// callback (exchange.ts). Whatever a synchronous step does — throws a
// catalogue error, crashes, registers a finalizer, reads the client address
// after an await — the answer and its bookkeeping are the same as on the
// asynchronous path.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { uws, type us_listen_socket } from '../src/server/uws.js';
import { HttpApi, type Principal } from '../src/server/http.js';
import { compileQuery } from '../src/server/schema.js';
import { createLogger } from '../src/log.js';
import { fail } from '../src/errors.js';

const lines: string[] = [];
const answered: Array<[string | undefined, number]> = [];
let finals = 0;
let listen: us_listen_socket;
let base: string;
const alice: Principal = { userId: 'u-alice', name: 'alice', role: 'user', via: 'key', keyId: 'k1' };

before(async () => {
  const api = new HttpApi(
    {
      // Synchronous, like a cached API key; a refusal thrown synchronously.
      authenticate: (token) => {
        if (token === 'good') return alice;
        if (token === 'slow') return Promise.resolve(alice);
        throw fail('UNAUTHENTICATED', 'invalid API key');
      },
      answered: (route, _m, status) => void answered.push([route, status]),
    },
    createLogger('debug', {}, (l) => void lines.push(l)),
    4096,
  );
  const memo = { ...compileQuery(Type.Object({ n: Type.Optional(Type.Integer({ maximum: 5 })) }, { additionalProperties: false })), byRaw: new Map() };
  api.route({ method: 'GET', path: '/sync/missing', auth: 'none', handler: () => { throw fail('NOT_FOUND', 'no such thing'); } });
  api.route({ method: 'GET', path: '/sync/crash', auth: 'none', handler: () => { throw new Error('boom'); } });
  api.route({ method: 'GET', path: '/sync/me', auth: 'user', handler: (r) => { r.whenDone(() => finals++); return { who: r.principal.userId }; } });
  api.route({ method: 'GET', path: '/sync/ip', auth: 'none', handler: async (r) => { await new Promise((ok) => setTimeout(ok, 5)); return { ip: r.ip }; } });
  api.route({ method: 'GET', path: '/sync/query', auth: 'none', query: memo, handler: (r) => ({ n: r.query.n ?? null, memo: memo.byRaw.size }) });
  const shared = { ...compileQuery(Type.Object({ n: Type.Optional(Type.Integer()), tags: Type.Optional(Type.Array(Type.String())) })), byRaw: new Map() };
  api.route({ method: 'GET', path: '/sync/query-write', auth: 'none', query: shared, handler: (r) => {
    const q = r.query as { n?: number; tags?: string[] };
    const refused: string[] = [];
    try { q.n = 99; } catch { refused.push('n'); }
    try { q.tags?.push('x'); } catch { refused.push('tags'); }
    return { refused, n: q.n ?? null, tags: q.tags ?? null };
  } });
  const app = uws.App();
  api.attach(app);
  listen = await new Promise((ok, no) => app.listen('127.0.0.1', 0, (s) => (s ? ok(s) : no(new Error('listen failed')))));
  base = `http://127.0.0.1:${uws.us_socket_local_port(listen)}`;
});
after(() => uws.us_listen_socket_close(listen));

const get = async (path: string, token?: string) => {
  const r = await fetch(base + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: r.status, headers: r.headers, body: (await r.json()) as any };
};

test('a catalogue error thrown synchronously is its envelope; a crash is a 500 envelope and a logged error', async () => {
  const m = await get('/sync/missing');
  assert.equal(m.status, 404);
  assert.deepEqual(m.body, { code: '4040', message: 'no such thing', data: null });
  const c = await get('/sync/crash');
  assert.equal(c.status, 500);
  assert.equal(c.body.data, null);
  assert.ok(lines.some((l) => l.includes('"unhandled error"') && l.includes('/sync/crash')));
});

test('a synchronous key check: answered, finalizers run once, metrics and the access line carry the route and the principal', async () => {
  const before = finals;
  assert.deepEqual((await get('/sync/me', 'good')).body.data, { who: 'u-alice' });
  assert.deepEqual((await get('/sync/me', 'slow')).body.data, { who: 'u-alice' });
  assert.equal(finals, before + 2);
  assert.ok(answered.some(([route, status]) => route === '/sync/me' && status === 200));
  assert.ok(lines.some((l) => l.includes('"request"') && l.includes('"route":"/sync/me"') && l.includes('"principal":"u-alice"')));
  const bad = await get('/sync/me', 'nope');
  assert.equal(bad.status, 401);
  assert.match(bad.headers.get('www-authenticate') ?? '', /invalid_token/);
});

test('the client address is read on first use, after an await too', async () => {
  assert.equal((await get('/sync/ip')).body.data.ip, '127.0.0.1');
});

test('a kept query is shared between requests, so frozen: a handler cannot change what the next request reads', async () => {
  for (let i = 0; i < 2; i++) {
    const r = await get('/sync/query-write?n=3&tags=a');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, { refused: ['n', 'tags'], n: 3, tags: ['a'] });
  }
});

test('a memo-able query is kept by its raw string; a refused one is not kept', async () => {
  assert.deepEqual((await get('/sync/query?n=3')).body.data, { n: 3, memo: 1 });
  assert.deepEqual((await get('/sync/query?n=3')).body.data, { n: 3, memo: 1 });
  assert.equal((await get('/sync/query?n=9')).status, 400);
  assert.equal((await get('/sync/query?n=9')).status, 400);
  assert.deepEqual((await get('/sync/query?n=4')).body.data, { n: 4, memo: 2 });
});
