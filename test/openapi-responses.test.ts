// Issue 13, part 1 ("how it is shown"): one dedicated pass drives every route of
// the router once with a real request and checks the real answer against the
// schema the OpenAPI document gives for it (typebox's compiled checker): the
// envelope's `data`, the plain 202 bodies, the event frames (every session
// event: two runs the fake host plays over a streamed POST .../messages). A
// route whose real answer does not validate has a wrong schema (or wrong code).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Compile } from 'typebox/compile';
import { startTestHub, type TestHub, type ApiResult } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { openSse, type SseFrame } from './helpers/sse.js';
import { connectFakeHost, CLAUDE_ENGINE, type FakeHost } from './helpers/host.js';

const BOT_SECRET = 'bot-secret-openapi';
let t: TestHub;
let idp: FakeOidc;
let sms: Server;
const inbox: any[] = [];
let doc: any;
let host: FakeHost | undefined;

before(async () => {
  sms = createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      inbox.push(JSON.parse(b));
      res.end('{}');
    });
  });
  await new Promise<void>((r) => sms.listen(0, '127.0.0.1', r));
  idp = await startFakeOidc();
  t = await startTestHub({ rateLimitPhoneCodePerHour: 0 }, { ...idp.env, SMS_WEBHOOK_URL: `http://127.0.0.1:${(sms.address() as AddressInfo).port}/sms`, CHATAPP_WEBHOOK_SECRET: BOT_SECRET });
  // Raw: the document itself, read as JSON (it is the schema source, not an enveloped answer).
  doc = (await t.api('GET', '/api/v1/openapi.json')).body;
});
after(async () => {
  host?.close();
  await t.close();
  await idp.close();
  await new Promise((r) => sms.close(r));
});

const toOpenApi = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const key = (method: string, template: string) => `${method} ${template}`;
/** Routes driven so far, with what was checked. */
const driven = new Map<string, string>();

/** The documented schema of `template`'s answer with `status` and `type` (the envelope's `data` for JSON envelopes). */
function documented(method: string, template: string, status: number, type: string): any {
  const op = doc.paths[toOpenApi(template)]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${template} is in the document`);
  const res = op.responses[String(status)];
  assert.ok(res, `${method} ${template}: ${status} is documented (documented: ${Object.keys(op.responses)})`);
  const schema = res.content?.[type]?.schema;
  assert.ok(schema || !res.content, `${method} ${template} ${status}: ${type} is documented`);
  return schema;
}

function validate(what: string, schema: any, value: unknown) {
  const c = Compile(schema);
  if (process.env.OPENAPI_DUMP) {
    if (schema?.$ref?.endsWith('UndocumentedData')) console.log('UNDOC', what, '\n   ', JSON.stringify(value).slice(0, 1500));
    if (!c.Check(value)) console.log('INVALID', what, JSON.stringify([...c.Errors(value)].slice(0, 3)), '\n   ', JSON.stringify(value).slice(0, 1500));
    return;
  }
  assert.ok(c.Check(value), `${what}: ${JSON.stringify([...c.Errors(value)].slice(0, 3))}\n${JSON.stringify(value).slice(0, 600)}`);
}

/** One real call: asserts the status, checks the answer against the document, returns the data (or the plain body). */
async function call(method: string, path: string, template: string, status: number, opts: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<any> {
  const r: ApiResult = await t.api(method, path, opts);
  assert.equal(r.status, status, `${method} ${path}: ${r.text.slice(0, 300)}`);
  const type = (r.headers.get('content-type') ?? '').split(';')[0];
  const schema = documented(method, template, status, type || 'application/json');
  if (type === 'application/json') {
    const envelope = schema.allOf?.[0]?.$ref === '#/components/schemas/Envelope';
    if (envelope) {
      validate(`${method} ${template} envelope`, doc.components.schemas.Envelope, r.body);
      validate(`${method} ${template} data`, schema.allOf[1].properties.data, r.body.data);
    } else validate(`${method} ${template} body`, schema, r.body);
  }
  driven.set(key(method, template), `${status} ${type || '(empty)'}`);
  if (type !== 'application/json') return r.text;
  return r.body && typeof r.body === 'object' && 'data' in r.body && 'code' in r.body ? r.body.data : r.body;
}

/** A stream route: each frame's data against its event's documented schema. */
async function callStream(path: string, template: string, token: string, untilEvent: string) {
  const schema = documented('GET', template, 200, 'text/event-stream');
  const sse = await openSse(t.url + path, { headers: { Authorization: `Bearer ${token}` } });
  const frame = await sse.until((f) => f.event === untilEvent);
  const ev = schema.oneOf.find((o: any) => o.properties.event.const === frame.event);
  assert.ok(ev, `event ${frame.event} is documented`);
  validate(`${template} event ${frame.event}`, doc.components.schemas[ev.properties.data.$ref.split('/').pop()], frame.data);
  sse.close();
  driven.set(key('GET', template), `200 text/event-stream`);
}

/** Each frame's data against the schema the document gives its event (`components.schemas.Event.<name>`). */
function validateFrames(what: string, schema: any, frames: SseFrame[]) {
  for (const f of frames) {
    const ev = schema.oneOf.find((o: any) => o.properties.event.const === f.event);
    assert.ok(ev, `${what}: event ${f.event} is documented`);
    validate(`${what} event ${f.event}`, doc.components.schemas[ev.properties.data.$ref.split('/').pop()], f.data);
  }
}

/**
 * A message sent with `Accept: text/event-stream`: the fake host plays the run
 * (`play` gets its runId) and every event of the streamed answer is checked.
 * Answers the event names received, in order.
 */
async function streamRun(sessionId: string, token: string, content: string, play: (runId: string) => void): Promise<string[]> {
  const template = '/api/v1/sessions/:id/messages';
  const schema = documented('POST', template, 200, 'text/event-stream');
  const seen = new Set(host!.frames.filter((f) => f.t === 'run.start').map((f: any) => f.runId));
  const sse = await openSse(`${t.url}/api/v1/sessions/${sessionId}/messages`, {
    method: 'POST', body: JSON.stringify({ content }),
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
  });
  try {
    assert.equal(sse.status, 200, sse.text);
    const start: any = await host!.next((f: any) => f.t === 'run.start' && !seen.has(f.runId));
    play(start.runId);
    await sse.until((f) => f.event === 'run.completed' || f.event === 'run.error');
    validateFrames(`POST ${template}`, schema, sse.frames);
    driven.set(key('POST', template), '200 text/event-stream');
    return sse.frames.map((f) => f.event);
  } finally {
    sse.close();
  }
}

test('every route of the router answers a real request that validates against its documented schema', async () => {
  const A = t.adminKey;
  const enc = encodeURIComponent;
  await call('GET', '/api/v1/me', '/api/v1/me', 200, { token: A });

  // ---------- public, health, documents ----------
  await call('GET', '/api/v1/health', '/api/v1/health', 200);
  await call('GET', '/metrics', '/metrics', 200);
  await call('GET', '/api/v1/openapi.json', '/api/v1/openapi.json', 200);
  await call('GET', '/api/docs', '/api/docs', 200);
  await call('GET', '/api/docs/swagger-ui.css', '/api/docs/:file', 200);
  await call('GET', '/', '/', 200);
  const index = await t.api('GET', '/'); // raw: the console's HTML page, outside the API
  const asset = /\/console\/([A-Za-z0-9._-]+\.js)/.exec(index.text)?.[1];
  assert.ok(asset, 'the console page names its script');
  await call('GET', `/console/${asset}`, '/console/:file', 200);

  // ---------- accounts ----------
  const made = await call('POST', '/api/v1/admin/users', '/api/v1/admin/users', 201, { token: A, body: { name: 'reader' } });
  const u = { id: made.user.id as string, key: made.apiKey as string };
  await call('GET', '/api/v1/admin/users', '/api/v1/admin/users', 200, { token: A });
  await call('GET', '/api/v1/admin/users/summary', '/api/v1/admin/users/summary', 200, { token: A });
  await call('PATCH', `/api/v1/admin/users/${u.id}/plan`, '/api/v1/admin/users/:id/plan', 200, { token: A, body: { planId: 'pro' } });
  await call('POST', `/api/v1/admin/users/${u.id}/grant-token`, '/api/v1/admin/users/:id/grant-token', 200, { token: A, body: { qty: 2 } });
  const k = await call('POST', '/api/v1/me/keys', '/api/v1/me/keys', 201, { token: u.key, body: { name: 'docs' } });
  await call('GET', '/api/v1/me/keys', '/api/v1/me/keys', 200, { token: u.key });
  await call('POST', `/api/v1/me/keys/${k.id}/refresh`, '/api/v1/me/keys/:id/refresh', 200, { token: u.key });
  await call('DELETE', `/api/v1/me/keys/${k.id}`, '/api/v1/me/keys/:id', 200, { token: u.key });

  // ---------- login (a local OpenID Provider) ----------
  await call('GET', '/api/v1/auth/providers', '/api/v1/auth/providers', 200);
  const start = await call('GET', '/api/v1/auth/login?from=/agents', '/api/v1/auth/login', 200);
  const login = await call('POST', '/api/v1/auth/callback', '/api/v1/auth/callback', 200, { body: { code: idp.authorize(start.url, { sub: 'doc-1', name: 'Doc' }), state: start.state } });
  const refreshed = await call('POST', '/api/v1/auth/refresh', '/api/v1/auth/refresh', 200, { body: { refresh_token: login.refreshToken } });
  await call('POST', '/api/v1/auth/logout', '/api/v1/auth/logout', 200, { token: refreshed.accessToken });
  await call('GET', '/api/v1/auth/sso-logout', '/api/v1/auth/sso-logout', 200);
  const link = await call('POST', '/api/v1/me/idem/oidc/link', '/api/v1/me/idem/:provider/link', 200, { token: u.key });
  await call('POST', '/api/v1/auth/callback', '/api/v1/auth/callback', 200, { token: u.key, body: { code: idp.authorize(link.url, { sub: 'doc-2' }), state: link.state } });
  await call('GET', '/api/v1/me/bindings', '/api/v1/me/bindings', 200, { token: u.key });
  await call('DELETE', '/api/v1/me/idem/oidc', '/api/v1/me/idem/:provider', 200, { token: u.key });

  // ---------- phone and chat-platform bindings ----------
  await call('POST', '/api/v1/me/phone/send-code', '/api/v1/me/phone/send-code', 200, { token: u.key, body: { phone: '13800000077' } });
  await call('POST', '/api/v1/me/phone/bind', '/api/v1/me/phone/bind', 200, { token: u.key, body: { phone: '13800000077', code: inbox.at(-1).code } });
  const attempt = await call('POST', '/api/v1/me/chatapp/binding-attempts', '/api/v1/me/chatapp/binding-attempts', 201, { token: A });
  await call('GET', `/api/v1/me/chatapp/binding-attempts/${attempt.id}`, '/api/v1/me/chatapp/binding-attempts/:id', 200, { token: A });
  await call('POST', '/api/v1/chatapp/confirm', '/api/v1/chatapp/confirm', 200, { body: { code: attempt.code, chatUserId: 'tg-doc' }, headers: { 'x-chatapp-secret': BOT_SECRET } });
  await call('GET', '/api/v1/me/chatapp/binding', '/api/v1/me/chatapp/binding', 200, { token: A });
  await call('DELETE', '/api/v1/me/chatapp/binding', '/api/v1/me/chatapp/binding', 200, { token: A });

  // ---------- billing ----------
  await call('GET', '/api/v1/me/balance', '/api/v1/me/balance', 200, { token: A });
  await call('GET', '/api/v1/me/ledger', '/api/v1/me/ledger', 200, { token: A });
  await call('GET', '/api/v1/me/trends', '/api/v1/me/trends', 200, { token: A });
  await call('GET', '/api/v1/me/plan', '/api/v1/me/plan', 200, { token: u.key });
  await call('GET', '/api/v1/plans', '/api/v1/plans', 200);
  await call('GET', '/api/v1/token-packs', '/api/v1/token-packs', 200);
  await call('GET', '/api/v1/store/products', '/api/v1/store/products', 200);
  const pack = await call('POST', '/api/v1/orders/token-pack', '/api/v1/orders/token-pack', 201, { token: A, body: { packId: 'pack-1k', payMethod: 'alipay' } });
  const plan = await call('POST', '/api/v1/orders/plan', '/api/v1/orders/plan', 201, { token: A, body: { planId: 'pro', cycle: 'month', payMethod: 'wechat' } });
  await call('GET', '/api/v1/orders', '/api/v1/orders', 200, { token: A });
  await call('GET', `/api/v1/orders/${pack.id}`, '/api/v1/orders/:id', 200, { token: A });
  await call('POST', `/api/v1/orders/${plan.id}/cancel`, '/api/v1/orders/:id/cancel', 200, { token: A });
  const page = await call('GET', pack.payUrl, '/api/v1/payments/sandbox/pay/:id', 200);
  const fields = Object.fromEntries([...String(page).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]));
  await call('POST', '/api/v1/payments/notify/sandbox', '/api/v1/payments/notify/sandbox', 200, { raw: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  const pack2 = await call('POST', '/api/v1/orders/token-pack', '/api/v1/orders/token-pack', 201, { token: A, body: { packId: 'pack-1k', payMethod: 'alipay' } });
  await call('POST', `/api/v1/admin/orders/${pack2.id}/confirm-payment`, '/api/v1/admin/orders/:id/confirm-payment', 200, { token: A, body: {} });
  const redeem = await call('POST', '/api/v1/store/redeem', '/api/v1/store/redeem', 201, { token: A, body: { productId: 'coffee-voucher' } });
  const rejected = await call('POST', '/api/v1/store/redeem', '/api/v1/store/redeem', 201, { token: A, body: { productId: 'coffee-voucher' } });
  await call('GET', '/api/v1/admin/redeems/summary', '/api/v1/admin/redeems/summary', 200, { token: A });
  await call('GET', '/api/v1/admin/redeems', '/api/v1/admin/redeems', 200, { token: A });
  await call('GET', `/api/v1/admin/redeems/${redeem.id}`, '/api/v1/admin/redeems/:id', 200, { token: A });
  await call('POST', `/api/v1/admin/redeems/${redeem.id}/deliver`, '/api/v1/admin/redeems/:id/deliver', 200, { token: A, body: { cards: [{ no: 'N1', pwd: 'P1' }] } });
  await call('POST', `/api/v1/admin/redeems/${rejected.id}/reject`, '/api/v1/admin/redeems/:id/reject', 200, { token: A, body: { reason: 'out of stock' } });
  await call('POST', `/api/v1/admin/redeems/${redeem.id}/cards`, '/api/v1/admin/redeems/:id/cards', 200, { token: A, body: {} });
  await call('GET', '/api/v1/me/redeems', '/api/v1/me/redeems', 200, { token: A });
  await call('GET', `/api/v1/me/redeems/${redeem.id}`, '/api/v1/me/redeems/:id', 200, { token: A });
  await call('PATCH', `/api/v1/me/redeems/${redeem.id}/read`, '/api/v1/me/redeems/:id/read', 200, { token: A });
  await call('POST', `/api/v1/me/redeems/${redeem.id}/cards`, '/api/v1/me/redeems/:id/cards', 200, { token: A, body: {} });

  // ---------- hosts (a fake host on the real channel) and model configurations ----------
  const pk = await call('POST', '/api/v1/hosts/pair-key', '/api/v1/hosts/pair-key', 201, { token: A });
  const paired = await call('POST', '/api/v1/hosts/pair', '/api/v1/hosts/pair', 201, { body: { pairKey: pk.pairKey, name: 'doc-host' } });
  host = await connectFakeHost(t, paired.credential, { engines: [CLAUDE_ENGINE] });
  const hostId = paired.hostId as string;
  await call('POST', '/api/v1/hosts/heartbeat', '/api/v1/hosts/heartbeat', 200, { token: paired.credential, body: {} });
  await call('GET', '/api/v1/hosts', '/api/v1/hosts', 200, { token: A });
  await call('GET', `/api/v1/hosts/${hostId}`, '/api/v1/hosts/:id', 200, { token: A });
  await call('GET', `/api/v1/hosts/${hostId}/engines`, '/api/v1/hosts/:id/engines', 200, { token: A });
  await call('GET', `/api/v1/hosts/${hostId}/directories`, '/api/v1/hosts/:id/directories', 200, { token: A });
  await call('POST', `/api/v1/hosts/${hostId}/refresh`, '/api/v1/hosts/:id/refresh', 200, { token: A });
  await call('PATCH', `/api/v1/hosts/${hostId}/remark`, '/api/v1/hosts/:id/remark', 200, { token: A, body: { remark: 'desk' } });
  const mc = await call('POST', '/api/v1/model-configs', '/api/v1/model-configs', 201, { token: A, body: { name: 'doc', apiType: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-0123456789abcdef', modelName: 'gpt-x' } });
  await call('GET', '/api/v1/model-configs', '/api/v1/model-configs', 200, { token: A });
  await call('GET', `/api/v1/model-configs/${mc.id}`, '/api/v1/model-configs/:id', 200, { token: A });
  await call('PATCH', `/api/v1/model-configs/${mc.id}`, '/api/v1/model-configs/:id', 200, { token: A, body: { name: 'doc2' } });
  await call('POST', '/api/v1/model-configs/test', '/api/v1/model-configs/test', 200, { token: A, body: { id: mc.id } });
  await call('POST', `/api/v1/hosts/${hostId}/model-config`, '/api/v1/hosts/:id/model-config', 200, { token: A, body: { configId: null } });

  // ---------- agents ----------
  const agent = await call('POST', '/api/v1/agents', '/api/v1/agents', 201, { token: A, body: { name: 'documented', scope: 'private', hostId, engine: 'claude-code' } });
  const id = enc(agent.id);
  await call('GET', '/api/v1/agents', '/api/v1/agents', 200);
  await call('GET', '/api/v1/agents/facets', '/api/v1/agents/facets', 200);
  await call('GET', '/api/v1/agents/featured', '/api/v1/agents/featured', 200);
  await call('PATCH', `/api/v1/agents/${id}`, '/api/v1/agents/:id', 200, { token: A, body: { displayName: 'Documented' } });
  await call('GET', `/api/v1/agents/${id}`, '/api/v1/agents/:id', 200, { token: A });
  await call('GET', `/api/v1/agents/${id}/manage`, '/api/v1/agents/:id/manage', 200, { token: A });
  await call('GET', '/api/v1/agents/mine', '/api/v1/agents/mine', 200, { token: A });
  await call('GET', '/api/v1/agents/available-hosts', '/api/v1/agents/available-hosts', 200, { token: A });
  await call('GET', '/api/v1/agents/overview', '/api/v1/agents/overview', 200, { token: A });
  await call('GET', '/api/v1/agents/stats/summary', '/api/v1/agents/stats/summary', 200, { token: A });
  await call('GET', `/api/v1/agents/${id}/stats`, '/api/v1/agents/:id/stats', 200, { token: A });
  await call('POST', '/api/v1/agents/ai-fill', '/api/v1/agents/ai-fill', 200, { token: A, body: { text: 'Reviews TypeScript pull requests and finds bugs.' } });
  await call('POST', `/api/v1/agents/${id}/favorite`, '/api/v1/agents/:id/favorite', 200, { token: A });
  await call('DELETE', `/api/v1/agents/${id}/favorite`, '/api/v1/agents/:id/favorite', 200, { token: A });
  const share = await call('GET', `/api/v1/agents/${id}/share-link`, '/api/v1/agents/:id/share-link', 200, { token: A });
  await call('POST', `/api/v1/agents/${id}/share-link/refresh`, '/api/v1/agents/:id/share-link/refresh', 200, { token: A });
  const invite = await call('POST', `/api/v1/agents/${id}/invites/refresh`, '/api/v1/agents/:id/invites/refresh', 200, { token: A });
  void share;
  await call('GET', `/api/v1/invites/${invite.token}`, '/api/v1/invites/:token', 200, { token: u.key });
  await call('POST', `/api/v1/invites/${invite.token}/decide`, '/api/v1/invites/:token/decide', 200, { token: u.key, body: { accept: true } });
  await call('GET', `/api/v1/agents/${id}/invites`, '/api/v1/agents/:id/invites', 200, { token: A });
  await call('DELETE', `/api/v1/agents/${id}/invites/${u.id}`, '/api/v1/agents/:id/invites/:userId', 200, { token: A });
  await call('GET', '/api/v1/admin/agents', '/api/v1/admin/agents', 200, { token: A });
  await call('GET', '/api/v1/admin/agents/pending', '/api/v1/admin/agents/pending', 200, { token: A });
  // Public agents wait for review: one is rejected, one approved.
  const pub = [];
  for (const name of ['reviewed-1', 'reviewed-2']) pub.push(enc((await t.admin.agents.create({ name, scope: 'public', step: 'submit', hostId, engine: 'claude-code', tags: ['x'] })).id));
  await call('POST', `/api/v1/admin/agents/${pub[0]}/reject`, '/api/v1/admin/agents/:id/reject', 200, { token: A, body: { reason: 'needs a description' } });
  await call('POST', `/api/v1/admin/agents/${pub[1]}/approve`, '/api/v1/admin/agents/:id/approve', 200, { token: A });
  await call('GET', '/api/v1/admin/agents/summary', '/api/v1/admin/agents/summary', 200, { token: A });
  await call('GET', `/api/v1/admin/agents/${id}/review`, '/api/v1/admin/agents/:id/review', 200, { token: A });

  // ---------- sessions ----------
  const session = await call('POST', '/api/v1/sessions', '/api/v1/sessions', 201, { token: A, body: { agentId: agent.id } });
  await call('GET', '/api/v1/sessions', '/api/v1/sessions', 200, { token: A });
  await call('GET', `/api/v1/sessions/${session.id}?includeMessages=true`, '/api/v1/sessions/:id', 200, { token: A });
  await call('GET', `/api/v1/sessions/${session.id}/messages`, '/api/v1/sessions/:id/messages', 200, { token: A });
  await call('GET', `/api/v1/sessions/${session.id}/queue`, '/api/v1/sessions/:id/queue', 200, { token: A });
  await call('GET', `/api/v1/sessions/${session.id}/cost`, '/api/v1/sessions/:id/cost', 200, { token: A });
  await callStream(`/api/v1/sessions/${session.id}/events`, '/api/v1/sessions/:id/events', A, 'snapshot');
  await call('PATCH', `/api/v1/sessions/${session.id}`, '/api/v1/sessions/:id', 200, { token: A, body: { title: 'documented' } });
  // Two runs streamed: the fake host sends text, a tool call and its result, then ends the first well and the second with an error.
  const played = await streamRun(session.id, A, 'list the files', (runId) => {
    host!.send({ t: 'run.delta', runId, text: 'Looking' });
    host!.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'tool_use', toolName: 'Bash', toolId: 'tu_1', toolInput: { command: 'ls' } }] });
    host!.send({ t: 'run.message', runId, role: 'user', blocks: [{ kind: 'tool_result', toolId: 'tu_1', toolResult: { content: 'a.txt', isError: false } }] });
    host!.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content: 'Looking: a.txt' }] });
    host!.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 3, outputTokens: 2 } });
  });
  for (const e of ['accepted', 'message.delta', 'tool.started', 'tool.completed', 'run.completed']) assert.ok(played.includes(e), `the run streamed ${e}: ${played}`);
  const failed = await streamRun(session.id, A, 'and fail', (runId) => host!.send({ t: 'run.end', runId, ok: false, error: { code: 'ENGINE_FAILED', message: 'engine exited with code 3' } }));
  assert.equal(failed.at(-1), 'run.error', `the second run ended in run.error: ${failed}`);
  // The first message starts a run on the fake host (which stays silent); the second queues behind it.
  await call('POST', `/api/v1/sessions/${session.id}/messages`, '/api/v1/sessions/:id/messages', 202, { token: A, body: { content: 'hello' } });
  const queued = await call('POST', `/api/v1/sessions/${session.id}/messages`, '/api/v1/sessions/:id/messages', 202, { token: A, body: { content: 'and then' } });
  await call('DELETE', `/api/v1/sessions/${session.id}/queue/${queued.taskId}`, '/api/v1/sessions/:id/queue/:taskId', 200, { token: A });
  await call('POST', `/api/v1/sessions/${session.id}/abort`, '/api/v1/sessions/:id/abort', 200, { token: A });
  await call('DELETE', `/api/v1/sessions/${session.id}`, '/api/v1/sessions/:id', 200, { token: A });

  // ---------- deletions last ----------
  await call('DELETE', `/api/v1/model-configs/${mc.id}`, '/api/v1/model-configs/:id', 200, { token: A });
  await call('DELETE', `/api/v1/agents/${id}`, '/api/v1/agents/:id', 204, { token: A });
  await call('DELETE', `/api/v1/hosts/${hostId}`, '/api/v1/hosts/:id', 200, { token: A });
  await call('DELETE', `/api/v1/admin/users/${u.id}`, '/api/v1/admin/users/:id', 200, { token: A });

  const missing = t.hub.routes.map((r) => key(r.method, r.path)).filter((k) => !driven.has(k));
  assert.deepEqual(missing, [], 'every route was driven once');
});

test('every route documents its success answer with a schema (no UndocumentedData left)', () => {
  const undocumented: string[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [m, op] of Object.entries<any>(ops)) if (/UndocumentedData/.test(JSON.stringify(op.responses))) undocumented.push(`${m.toUpperCase()} ${path}`);
  }
  assert.deepEqual(undocumented, []);
});
