// POST /model-configs/test against real local HTTP endpoints started here:
// every reply shape the probe must judge, the auth-mode write-back, the
// timeout, redirects and the egress rule.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError, failure } from './helpers/api-error.js';
import type { ModelTestInput } from '../src/client/index.js';

const KEY = 'sk-probe-KEY-0123456789abcdef';
type Handler = (req: IncomingMessage & { body: any }, res: ServerResponse) => void;

const servers: Server[] = [];
async function endpoint(handler: Handler): Promise<{ url: string; hits: () => number; last: () => IncomingMessage & { body: any } }> {
  let hits = 0;
  let last: any;
  const s = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      hits++;
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      last = Object.assign(req, { body });
      handler(last, res);
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, hits: () => hits, last: () => last };
}
const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

/** The socket connections this process attempts while `fn` runs (host:port), the probe's among them: the hub runs here. */
async function connectsDuring<T>(fn: () => Promise<T>): Promise<{ value: T; targets: string[] }> {
  const original = Socket.prototype.connect;
  const targets: string[] = [];
  Socket.prototype.connect = function (this: Socket, ...args: any[]) {
    // net.connect passes its arguments normalized: [[options, callback]].
    const o = Array.isArray(args[0]) ? args[0][0] : args[0];
    targets.push(o && typeof o === 'object' ? `${o.host ?? o.path ?? ''}:${o.port ?? ''}` : `${args[1] ?? 'localhost'}:${o}`);
    return (original as any).apply(this, args);
  } as typeof original;
  try {
    return { value: await fn(), targets };
  } finally {
    Socket.prototype.connect = original;
  }
}

let t: TestHub;
let strict: TestHub;
let u: { id: string; key: string };
// Drafts outside the typed shape (the validation cases) are cast: the client sends the same JSON.
const probe = (body: unknown, hub = t, token = u.key) => hub.client(token).modelConfigs.test(body as ModelTestInput);
const mc = () => t.client(u.key).modelConfigs;

before(async () => {
  t = await startTestHub({ modelTestTimeoutMs: 800, modelTestAllowPrivate: true, rateLimitModelTestPerMinute: 0 } as any);
  strict = await startTestHub({ modelTestTimeoutMs: 800, rateLimitModelTestPerMinute: 0 } as any);
  u = await t.user();
});
after(async () => {
  for (const s of servers) s.closeAllConnections(), s.close();
  await t.close();
  await strict.close();
});

test('messages format, x-api-key only: bearer refused, x-api-key passes, mode written back', async () => {
  const ep = await endpoint((req, res) => {
    if (req.url !== '/v1/messages' || req.method !== 'POST') return json(res, 404, { error: { message: 'no route' } });
    if (req.headers['x-api-key'] !== KEY) return json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    assert.equal(req.headers['anthropic-version'], '2023-06-01');
    json(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'pong' }], model: req.body.model });
  });
  const c = await mc().create({ name: 'a', apiType: 'anthropic', baseUrl: ep.url, apiKey: KEY, modelName: 'claude-x' });
  assert.equal(c.authMode, 'bearer');
  // Raw: the probe's answer is a 200 envelope (code '0') whatever the endpoint said.
  const r = await t.api('POST', '/api/v1/model-configs/test', { token: u.key, body: { id: c.id } });
  assert.equal(r.status, 200);
  assert.equal(r.body.code, '0');
  const d = r.body.data;
  assert.equal(d.ok, true, JSON.stringify(d));
  assert.equal(d.authMode, 'x-api-key');
  assert.equal(d.replyPreview, 'pong');
  assert.equal(typeof d.latencyMs, 'number');
  assert.equal(d.error, undefined);
  assert.equal(ep.hits(), 2, 'bearer first, then x-api-key');
  assert.equal(ep.last().body.model, 'claude-x');
  assert.equal(ep.last().body.messages[0].role, 'user');
  assert.equal((await mc().get(c.id)).authMode, 'x-api-key', 'written back');
});

test('messages format, bearer accepted: one request, authMode bearer (and written back over x-api-key)', async () => {
  const ep = await endpoint((req, res) => {
    if (req.headers.authorization !== `Bearer ${KEY}`) return json(res, 403, { error: { message: 'forbidden' } });
    json(res, 200, { content: [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: 'Pong!' }] });
  });
  const c = await mc().create({ name: 'b', apiType: 'anthropic', baseUrl: ep.url + '/', apiKey: KEY, modelName: 'm', authMode: 'x-api-key' });
  const d = (await probe({ id: c.id }));
  assert.deepEqual([d.ok, d.authMode, d.replyPreview], [true, 'bearer', 'Pong!']);
  assert.equal(ep.hits(), 1);
  assert.equal(ep.last().url, '/v1/messages', 'trailing slash of baseUrl is not doubled');
  assert.equal((await mc().get(c.id)).authMode, 'bearer');
});

test('chat-completions format: {baseUrl}/chat/completions with bearer; reply content checked', async () => {
  const ep = await endpoint((req, res) => {
    if (req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: 'not here' } });
    if (req.headers.authorization !== `Bearer ${KEY}`) return json(res, 401, { error: { message: 'bad key' } });
    json(res, 200, { choices: [{ index: 0, message: { role: 'assistant', content: 'pong from completions' } }] });
  });
  const d = (await probe({ apiType: 'openai', baseUrl: ep.url + '/v1', apiKey: KEY, modelName: 'gpt-x' }));
  assert.equal(d.ok, true, JSON.stringify(d));
  assert.equal(d.replyPreview, 'pong from completions');
  assert.equal(ep.last().body.model, 'gpt-x');

  const empty = await endpoint((_req, res) => json(res, 200, { choices: [{ message: { role: 'assistant', content: '' } }] }));
  const e = (await probe({ apiType: 'openai', baseUrl: empty.url, apiKey: KEY, modelName: 'gpt-x' }));
  assert.deepEqual([e.ok, e.reason], [false, 'bad_response'], 'an empty reply does not pass: it is not a ping');
});

test('401 on both modes → auth, with the status and the readable message; the key never appears', async () => {
  const ep = await endpoint((_req, res) => json(res, 401, { error: { type: 'authentication_error', message: `Incorrect API key provided: ${KEY}` } }));
  const d = await probe({ apiType: 'anthropic', baseUrl: ep.url, apiKey: KEY, modelName: 'm' });
  assert.deepEqual([d.ok, d.reason], [false, 'auth']);
  assert.match(d.error ?? '', /401/);
  assert.match(d.error ?? '', /Incorrect API key provided/);
  assert.equal(d.authMode, undefined);
  assert.equal(ep.hits(), 2);
  assert.ok(!JSON.stringify(d).includes(KEY), 'the key is scrubbed from the endpoint message');
});

test('404 model not found → model_not_found; 404 HTML page → path', async () => {
  const ep = await endpoint((req, res) => json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `model: ${req.body.model}` } }));
  const d = (await probe({ apiType: 'anthropic', baseUrl: ep.url, apiKey: KEY, modelName: 'claude-nope' }));
  assert.deepEqual([d.ok, d.reason], [false, 'model_not_found']);
  assert.match(d.error ?? '', /^HTTP 404: model: claude-nope/);

  const oa = await endpoint((_req, res) => json(res, 404, { error: { message: 'The model `gpt-9` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }));
  assert.equal((await probe({ apiType: 'openai', baseUrl: oa.url, apiKey: KEY, modelName: 'gpt-9' })).reason, 'model_not_found');

  const html = await endpoint((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<!doctype html><html><body>Not Found</body></html>');
  });
  const p = (await probe({ apiType: 'anthropic', baseUrl: html.url, apiKey: KEY, modelName: 'm' }));
  assert.deepEqual([p.ok, p.reason], [false, 'path']);
  assert.match(p.error ?? '', /404/);
});

test('429 → quota', async () => {
  const ep = await endpoint((_req, res) => json(res, 429, { type: 'error', error: { type: 'rate_limit_error', message: 'You exceeded your current quota' } }));
  const d = (await probe({ apiType: 'openai', baseUrl: ep.url, apiKey: KEY, modelName: 'm' }));
  assert.deepEqual([d.ok, d.reason], [false, 'quota']);
  assert.match(d.error ?? '', /^HTTP 429: You exceeded your current quota/);
});

test('garbage 200 body → bad_response', async () => {
  const ep = await endpoint((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('\u0000garbage{{{');
  });
  const d = (await probe({ apiType: 'anthropic', baseUrl: ep.url, apiKey: KEY, modelName: 'm' }));
  assert.deepEqual([d.ok, d.reason], [false, 'bad_response']);
  assert.match(d.error ?? '', /not JSON/);
  const noContent = await endpoint((_req, res) => json(res, 200, { id: 'x', content: [] }));
  assert.equal((await probe({ apiType: 'anthropic', baseUrl: noContent.url, apiKey: KEY, modelName: 'm' })).reason, 'bad_response');
});

test('an endpoint that never answers → timeout after the configured limit', async () => {
  const ep = await endpoint(() => {});
  const started = Date.now();
  const r = await probe({ apiType: 'anthropic', baseUrl: ep.url, apiKey: KEY, modelName: 'm' }); // a 200
  const took = Date.now() - started;
  assert.deepEqual([r.ok, r.reason], [false, 'timeout']);
  assert.ok(took >= 700 && took < 5000, `took ${took} ms`);
  assert.ok(r.latencyMs >= 700);
});

test('nothing listening → network', async () => {
  const ep = await endpoint(() => {});
  const url = ep.url;
  const s = servers.pop()!;
  s.close();
  await new Promise((r) => setTimeout(r, 50));
  const d = (await probe({ apiType: 'anthropic', baseUrl: url, apiKey: KEY, modelName: 'm' }));
  assert.deepEqual([d.ok, d.reason], [false, 'network']);
  assert.match(d.error ?? '', /ECONNREFUSED/);
});

test('a redirect to another host is not followed; one on the same host is', async () => {
  const other = await endpoint((_req, res) => json(res, 200, { content: [{ type: 'text', text: 'stolen' }] }));
  const away = await endpoint((_req, res) => {
    res.writeHead(307, { location: other.url + '/v1/messages' });
    res.end();
  });
  const d = (await probe({ apiType: 'anthropic', baseUrl: away.url, apiKey: KEY, modelName: 'm' }));
  assert.deepEqual([d.ok, d.reason], [false, 'path']);
  assert.match(d.error ?? '', /another host/);
  assert.equal(other.hits(), 0, 'the key never reached the other host');

  const same = await endpoint((req, res) => {
    if (req.url === '/v1/messages') {
      res.writeHead(308, { location: '/api/v1/messages' });
      return res.end();
    }
    json(res, 200, { content: [{ type: 'text', text: 'moved' }] });
  });
  const s = (await probe({ apiType: 'anthropic', baseUrl: same.url, apiKey: KEY, modelName: 'm' }));
  assert.deepEqual([s.ok, s.replyPreview], [true, 'moved']);
});

test('replyPreview is at most 120 characters', async () => {
  const ep = await endpoint((_req, res) => json(res, 200, { content: [{ type: 'text', text: 'x'.repeat(500) }] }));
  const d = (await probe({ apiType: 'anthropic', baseUrl: ep.url, apiKey: KEY, modelName: 'm' }));
  assert.equal(d.ok, true);
  assert.equal(d.replyPreview?.length, 120);
});

test('egress: link-local and metadata addresses always refused; private ones refused unless allowed', async () => {
  for (const baseUrl of ['http://169.254.169.254', 'http://[fd00:ec2::254]', 'http://[::ffff:169.254.169.254]']) {
    const { value: d, targets } = await connectsDuring(() => probe({ apiType: 'anthropic', baseUrl, apiKey: KEY, modelName: 'm' }));
    assert.deepEqual([d.ok, d.reason], [false, 'network'], baseUrl);
    assert.match(d.error ?? '', /^refused: address \S+ is link-local or a cloud metadata endpoint$/);
    const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
    assert.deepEqual(targets.filter((x) => x.startsWith(`${host}:`)), [], `refused before any connection attempt: ${targets.join(', ')}`);
  }
  const ep = await endpoint((_req, res) => json(res, 200, { content: [{ type: 'text', text: 'pong' }] }));
  const port = new URL(ep.url).port;
  // Allowed by default (loopback), by name and by address; the probe's connection is one the count above would see.
  const allowed = await connectsDuring(() => probe({ apiType: 'anthropic', baseUrl: `http://localhost:${port}`, apiKey: KEY, modelName: 'm' }));
  assert.equal(allowed.value.ok, true);
  assert.ok(allowed.targets.includes(`localhost:${port}`), `the probe's own connection is seen: ${allowed.targets.join(', ')}`);
  const sUser = await strict.user();
  const blockedName = (await probe({ apiType: 'anthropic', baseUrl: `http://localhost:${port}`, apiKey: KEY, modelName: 'm' }, strict, sUser.key));
  assert.deepEqual([blockedName.ok, blockedName.reason], [false, 'network']);
  assert.match(blockedName.error ?? '', /private or loopback/);
  const blockedIp = (await probe({ apiType: 'anthropic', baseUrl: ep.url, apiKey: KEY, modelName: 'm' }, strict, sUser.key));
  assert.match(blockedIp.error ?? '', /private or loopback/);
  const hits = ep.hits();
  assert.equal(hits, 1, 'the blocked tests never connected');
});

test('draft fields override a stored configuration; no write-back for a different key', async () => {
  const ep = await endpoint((req, res) => {
    if (req.headers['x-api-key'] === KEY) return json(res, 200, { content: [{ type: 'text', text: 'ok' }] });
    if (req.headers['x-api-key'] === 'sk-other-key-abcdef123456') return json(res, 200, { content: [{ type: 'text', text: 'other' }] });
    json(res, 401, { error: { message: 'no' } });
  });
  const c = await mc().create({ name: 'c', apiType: 'anthropic', baseUrl: ep.url, apiKey: 'sk-stored-but-wrong-000', modelName: 'm' });
  const stored = (await probe({ id: c.id }));
  assert.deepEqual([stored.ok, stored.reason], [false, 'auth']);
  const d = (await probe({ id: c.id, apiKey: 'sk-other-key-abcdef123456' }));
  assert.deepEqual([d.ok, d.authMode, d.replyPreview], [true, 'x-api-key', 'other']);
  assert.equal(ep.last().body.model, 'm', 'stored modelName used where the draft is silent');
  assert.equal((await mc().get(c.id)).authMode, 'bearer', 'the stored key was not what passed');
});

test('validation: a draft needs all four fields; unknown fields and bad types → 400', async () => {
  const r = await failure(probe({ apiType: 'anthropic', baseUrl: 'http://127.0.0.1:9', modelName: 'm' }));
  assert.equal(r.status, 400);
  assert.match(r.message, /apiKey/);
  await assert.rejects(probe({ apiType: 'anthropic', baseUrl: 'http://x', apiKey: KEY, modelName: 'm', foo: 1 }), apiError(400));
  await assert.rejects(probe({ apiType: 'anthropic', baseUrl: 'file:///etc/passwd', apiKey: KEY, modelName: 'm' }), apiError(400));
  await assert.rejects(probe({ id: 'mc-unknown' }), apiError(404));
  await assert.rejects(t.client().modelConfigs.test({ id: 'x' }), apiError(401));
});
