// Issue 12, parts 1, 2 and 4: starter tokens, runs charged from the runner's
// balance in the same database call that ends the run, owners of paid agents
// earning a share. The fake host plays the engine's frames with known usage.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 10_000, ownerShare: 0.2 });
});
after(() => t.close());

const enc = encodeURIComponent;
const balance = async (key: string) => (await t.api('GET', '/api/v1/me/balance', { token: key })).body.data.balance as number;
const ledger = async (key: string) => (await t.api('GET', '/api/v1/me/ledger?pageSize=100', { token: key })).body.data.items as any[];

async function ownerWithAgent(opts: { pay?: 'free' | 'paid'; capacity?: number } = {}) {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: opts.capacity ?? 1 });
  const body = opts.pay === 'paid'
    ? { name: 'paid-helper', scope: 'public', pay: 'paid', step: 'submit', hostId, engine: 'claude-code', workDir: '' }
    : { name: 'helper', scope: 'private', hostId, engine: 'claude-code', workDir: '' };
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: owner.key, body });
    return r.status === 201 ? r : undefined;
  }, 5000, 20);
  const agentId = a.body.data.id as string;
  if (opts.pay === 'paid') assert.equal((await t.api('POST', `/api/v1/admin/agents/${enc(agentId)}/approve`, { token: t.adminKey })).status, 200);
  return { owner, host, agentId };
}

/** Opens a session with a first message and plays its turn with the given usage; resolves once the session is idle again. */
async function runTurn(key: string, agentId: string, host: FakeHost, usage: { inputTokens: number; outputTokens: number }) {
  const before = host.frames.filter((f) => f.t === 'run.start').length;
  const r = await t.api('POST', '/api/v1/sessions', { token: key, body: { agentId, content: 'do it' } });
  assert.equal(r.status, 202, r.text);
  const start: any = await eventually(async () => host.frames.filter((f) => f.t === 'run.start')[before], 5000, 10);
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage });
  await eventually(async () => {
    const s = await t.api('GET', `/api/v1/sessions/${r.body.sessionId}`, { token: key });
    return s.body.data.status === 'active' ? s : undefined;
  }, 5000, 20);
  return { sessionId: r.body.sessionId as string, runId: start.runId as string };
}

test('a new account starts with STARTER_TOKENS, recorded as a grant in its ledger', async () => {
  const u = await t.user();
  assert.equal(await balance(u.key), 10_000);
  const l = await ledger(u.key);
  assert.equal(l.length, 1);
  assert.deepEqual([l[0].type, l[0].amount, l[0].balanceAfter, l[0].note], ['grant', 10_000, 10_000, 'starter tokens']);
  const created = await t.api('POST', '/api/v1/admin/users', { token: t.adminKey, body: { name: 'carol' } });
  assert.equal(created.body.data.user.balance, 10_000, 'the creation answer shows the starting balance');
});

test('a finished run debits exactly inputTokens + outputTokens × 2, one spend entry per run with ref = run id', async () => {
  const { owner, host, agentId } = await ownerWithAgent();
  const { runId, sessionId } = await runTurn(owner.key, agentId, host, { inputTokens: 1234, outputTokens: 321 });
  const cost = 1234 + 321 * 2;
  assert.equal(await balance(owner.key), 10_000 - cost);
  const spends = (await ledger(owner.key)).filter((e) => e.type === 'spend');
  assert.equal(spends.length, 1);
  assert.deepEqual([spends[0].amount, spends[0].ref, spends[0].balanceAfter], [-cost, runId, 10_000 - cost]);
  assert.equal((await t.api('GET', `/api/v1/sessions/${sessionId}/cost`, { token: owner.key })).body.data.cost, cost, 'the session cost and the charge agree');
  // An owner using their own agent earns nothing, even on a paid one.
  assert.equal((await ledger(owner.key)).filter((e) => e.type === 'earn').length, 0);
  host.close();
});

test('a run is charged in full even when that takes the balance below zero', async () => {
  const { owner, host, agentId } = await ownerWithAgent();
  await runTurn(owner.key, agentId, host, { inputTokens: 9_000, outputTokens: 1_000 });
  assert.equal(await balance(owner.key), 10_000 - 11_000);
  const l = await ledger(owner.key);
  assert.equal(l[0].balanceAfter, -1_000);
  assert.equal(l.reduce((s, e) => s + e.amount, 0), -1_000, 'the ledger adds up to the balance');
  host.close();
});

test('a run on someone else\'s paid agent credits the owner OWNER_SHARE of the cost; counters, ledger and stats agree', async () => {
  const { owner, host, agentId } = await ownerWithAgent({ pay: 'paid' });
  const runner = await t.user();
  const { runId } = await runTurn(runner.key, agentId, host, { inputTokens: 1000, outputTokens: 500 }); // cost 2000
  assert.equal(await balance(runner.key), 10_000 - 2000, 'the runner pays the full cost');
  assert.equal(await balance(owner.key), 10_000 + 400, 'the owner earns 20 %');
  const earn = (await ledger(owner.key)).filter((e) => e.type === 'earn');
  assert.equal(earn.length, 1);
  assert.deepEqual([earn[0].amount, earn[0].ref], [400, runId]);
  const stats = await eventually(async () => {
    const s = await t.api('GET', `/api/v1/agents/${enc(agentId)}/stats`, { token: owner.key });
    return s.body.data.earn === 400 ? s.body.data : undefined;
  }, 3000, 50);
  assert.equal(stats.cost, 2000);
  assert.equal(stats.runs, 1);
  const manage = await t.api('GET', `/api/v1/agents/${enc(agentId)}/manage`, { token: owner.key });
  assert.equal(manage.body.data.earn, 400);
  // A second run: the share lands once per run.
  await runTurn(runner.key, agentId, host, { inputTokens: 10, outputTokens: 0 }); // cost 10 → 2
  assert.equal(await balance(owner.key), 10_000 + 402);
  assert.equal((await ledger(owner.key)).filter((e) => e.type === 'earn').length, 2);
  host.close();
});

test('an aborted run is charged for the usage known, including usage the host reports after the abort', async () => {
  const { owner, host, agentId } = await ownerWithAgent();
  const r = await t.api('POST', '/api/v1/sessions', { token: owner.key, body: { agentId, content: 'long job' } });
  const start: any = await eventually(async () => host.frames.find((f) => f.t === 'run.start'), 5000, 10);
  assert.equal((await t.api('POST', `/api/v1/sessions/${r.body.sessionId}/abort`, { token: owner.key })).status, 200);
  await eventually(async () => host.frames.find((f) => f.t === 'run.abort'), 5000, 10);
  host.send({ t: 'run.end', runId: start.runId, ok: false, aborted: true, usage: { inputTokens: 100, outputTokens: 50 } });
  await eventually(async () => ((await balance(owner.key)) === 10_000 - 200 ? true : undefined), 5000, 50);
  const spends = (await ledger(owner.key)).filter((e) => e.type === 'spend');
  assert.equal(spends.length, 1);
  assert.equal(spends[0].ref, start.runId);
  const cost = await t.api('GET', `/api/v1/sessions/${r.body.sessionId}/cost`, { token: owner.key });
  assert.equal(cost.body.data.cost, 200);
  host.close();
});

test('50 concurrent run ends never put the ledger out of balance (sum of entries = balance)', async () => {
  const { owner, host, agentId } = await ownerWithAgent({ pay: 'paid', capacity: 50 });
  const runner = await t.user();
  const opened = await Promise.all(Array.from({ length: 50 }, () => t.api('POST', '/api/v1/sessions', { token: runner.key, body: { agentId, content: 'go' } })));
  for (const o of opened) assert.equal(o.status, 202, o.text);
  const starts: any[] = await eventually(async () => {
    const s = host.frames.filter((f) => f.t === 'run.start');
    return s.length === 50 ? s : undefined;
  }, 10_000, 20);
  for (const [i, s] of starts.entries()) host.send({ t: 'run.end', runId: s.runId, ok: true, usage: { inputTokens: 10 + i, outputTokens: i } });
  const expected = starts.reduce((sum, _s, i) => sum + (10 + i) + i * 2, 0);
  await eventually(async () => ((await balance(runner.key)) === 10_000 - expected ? true : undefined), 10_000, 50);
  for (const u of [runner, owner]) {
    const l = await ledger(u.key);
    assert.equal(l.reduce((s, e) => s + e.amount, 0), await balance(u.key), 'the ledger adds up to the balance');
  }
  const spends = (await ledger(runner.key)).filter((e) => e.type === 'spend');
  assert.equal(spends.length, 50);
  assert.equal(new Set(spends.map((e) => e.ref)).size, 50, 'one entry per run');
  const earned = starts.reduce((sum, _s, i) => sum + Math.floor(((10 + i) + i * 2) * 0.2), 0);
  assert.equal(await balance(owner.key), 10_000 + earned);
  host.close();
});
