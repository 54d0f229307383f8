// Issue 12, part 8: ai-fill asks a model through one of the caller's model
// configurations (both wire formats), keeps only what fits the agent limits,
// falls back to the rules without a usable configuration, follows the
// connectivity test's egress rule, never writes the agent, and is rate-limited
// per account.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';
import type { AiFillRequest } from '../src/client/index.js';

const KEY = 'sk-aifill-test-key-0001';

interface Stub { url: string; seen: Array<{ path: string; auth: string; body: any }>; reply: (path: string) => string; server: Server }

async function modelStub(): Promise<Stub> {
  const st: Stub = { url: '', seen: [], reply: () => '{}', server: undefined as unknown as Server };
  st.server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      st.seen.push({ path: req.url ?? '', auth: String(req.headers.authorization ?? req.headers['x-api-key'] ?? ''), body });
      const text = st.reply(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/messages') res.end(JSON.stringify({ type: 'message', content: [{ type: 'text', text }] }));
      else res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: text } }] }));
    });
  });
  await new Promise<void>((r) => st.server.listen(0, '127.0.0.1', r));
  st.url = `http://127.0.0.1:${(st.server.address() as { port: number }).port}`;
  return st;
}

let t: TestHub;
let ep: Stub;
before(async () => {
  ep = await modelStub();
  t = await startTestHub({ modelTestAllowPrivate: true, rateLimitAiFillPerMinute: 0 });
});
after(async () => {
  await t.close();
  ep.server.close();
});

const fill = (key: string, body: AiFillRequest) => t.client(key).agents.aiFill(body);
const config = async (key: string, apiType: 'anthropic' | 'openai', baseUrl = ep.url) =>
  (await t.client(key).modelConfigs.create({ name: apiType, apiType, baseUrl, apiKey: KEY, modelName: 'm-1' })).id;

const GOOD = JSON.stringify({ displayName: 'SQL Tutor', name: 'sql-tutor', desc: 'Explains SQL queries step by step.', tags: ['sql', 'teaching'], cat: 'education' });

test('messages format: the model\'s fields, source "model"; the prompt carries the text; the agent is not written', async () => {
  const u = await t.user();
  const id = await config(u.key, 'anthropic');
  ep.reply = () => 'Here you go:\n```json\n' + GOOD + '\n```';
  const r = await fill(u.key, { text: 'An agent that teaches SQL to beginners.' });
  assert.deepEqual(r, { name: 'sql-tutor', displayName: 'SQL Tutor', desc: 'Explains SQL queries step by step.', tags: ['sql', 'teaching'], cat: 'education', source: 'model', configId: id });
  const call = ep.seen.at(-1)!;
  assert.equal(call.path, '/v1/messages');
  assert.match(call.body.messages[0].content, /teaches SQL to beginners/);
  assert.equal(call.auth, `Bearer ${KEY}`);
  assert.equal((await t.client(u.key).agents.mine()).total, 0, 'ai-fill never writes an agent');
});

test('chat-completions format through a named configuration', async () => {
  const u = await t.user();
  await config(u.key, 'anthropic', 'http://127.0.0.1:9'); // the first one would fail: the named one is used
  const id = await config(u.key, 'openai');
  ep.reply = () => GOOD;
  const r = await fill(u.key, { text: 'SQL teacher', configId: id });
  assert.deepEqual([r.source, r.displayName, r.configId], ['model', 'SQL Tutor', id]);
  assert.equal(ep.seen.at(-1)!.path, '/chat/completions');
});

test('over-long model output is trimmed to the agent limits; what cannot fit is dropped or taken from the rules', async () => {
  const u = await t.user();
  await config(u.key, 'openai');
  ep.reply = () => JSON.stringify({
    displayName: 'D'.repeat(300), name: 'Not A Slug!! ' + 'x'.repeat(200), desc: 'y'.repeat(5000),
    tags: ['  SQL  ', 'sql', 'z'.repeat(100), 42, '', 'a', 'b', 'c', 'd', 'e'], cat: 'c'.repeat(80), extra: 'ignored',
  });
  const d = await fill(u.key, { text: 'Teach databases' });
  assert.equal(d.source, 'model');
  assert.equal(d.displayName.length, 80);
  assert.match(d.name, /^not-a-slug-x+$/);
  assert.ok(d.name.length <= 80);
  assert.equal(d.desc.length, 1000);
  assert.deepEqual(d.tags, ['sql', 'z'.repeat(30), 'a', 'b', 'c']);
  assert.equal(d.cat.length, 50);
  assert.equal((d as Record<string, unknown>).extra, undefined);
  // Each field is valid for the create endpoint as it stands.
  const created = await t.client(u.key).agents.create({ name: d.name, displayName: d.displayName, desc: d.desc, tags: d.tags, cat: d.cat });
  assert.equal(created.name, d.name);
});

test('malformed model output → the rules, source "rules" with the reason', async () => {
  const u = await t.user();
  await config(u.key, 'anthropic');
  for (const bad of ['I cannot help with that.', '{"displayName": ', '[1,2,3]', '{}', '{"tags": "not-a-list", "displayName": 7}']) {
    ep.reply = () => bad;
    const d = await fill(u.key, { text: 'Refactor TypeScript code safely.' });
    assert.deepEqual([d.source, d.reason, d.cat], ['rules', 'bad_response', 'coding'], bad);
  }
});

test('no configuration → the rules, no model called', async () => {
  const u = await t.user();
  const before = ep.seen.length;
  const d = await fill(u.key, { text: 'Deploy services with docker.' });
  assert.deepEqual([d.source, d.cat, d.reason], ['rules', 'ops', undefined]);
  assert.equal(ep.seen.length, before);
});

test('another account\'s configuration → 404; a bad configId → 400', async () => {
  const a = await t.user();
  const b = await t.user();
  const id = await config(a.key, 'anthropic');
  await assert.rejects(fill(b.key, { text: 'x', configId: id }), apiError(404));
  await assert.rejects(fill(b.key, { text: 'x', configId: '' }), apiError(400));
});

test('the connectivity test\'s egress rule: a loopback endpoint is refused by default, nothing is sent', async () => {
  const strict = await startTestHub();
  try {
    const u = await strict.user();
    const c = strict.client(u.key);
    await c.modelConfigs.create({ name: 'l', apiType: 'openai', baseUrl: ep.url, apiKey: KEY, modelName: 'm' });
    const before = ep.seen.length;
    const d = await c.agents.aiFill({ text: 'Write blog posts' });
    assert.deepEqual([d.source, d.reason, d.cat], ['rules', 'network', 'writing']);
    assert.equal(ep.seen.length, before, 'no request reached the endpoint');
  } finally {
    await strict.close();
  }
});

test('rate-limited per account (RATE_LIMIT_AI_FILL_PER_MINUTE)', async () => {
  const limited = await startTestHub({ rateLimitAiFillPerMinute: 2 });
  try {
    const u = await limited.user();
    const c = limited.client(u.key);
    await c.agents.aiFill({ text: 'hello agent' });
    await c.agents.aiFill({ text: 'hello agent' });
    await assert.rejects(c.agents.aiFill({ text: 'hello agent' }), apiError(429));
  } finally {
    await limited.close();
  }
});
