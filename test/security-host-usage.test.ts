// The usage a host reports is the owner's word, and on a paid agent the owner
// earns a share of what it charges the runner. A hostile host must not mint
// tokens nor ruin its guests: a run on another account's agent is charged at
// most what the runner's balance held (a host reporting any usage took a
// guest's balance far below zero, the account unusable until it paid that
// back), the owner earns only on what was covered, and usage past the per-run
// bound is a bad frame (the channel closes, nothing is charged). The owner
// could otherwise run its own paid agent from a second account and report any
// usage: that account went negative, the owner earned 20 % of any number.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from '@msgpack/msgpack';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { CloseCodes } from '../host-protocol/version.js';
import { MAX_RUN_TOKENS } from '../host-protocol/index.js';
import { usageOf } from '../src/host-cli/claude-stream.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ starterTokens: 10_000, ownerShare: 0.2 });
});
after(async () => {
  for (const h of hosts) h.close();
  await t.close();
});

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;
const ledger = async (key: string) => (await t.client(key).billing.ledger({ pageSize: 100 })).items;
const earned = async (key: string) => (await ledger(key)).filter((e) => e.type === 'earn');

function accepted(r: SessionView | AcceptedRun): AcceptedRun {
  assert.ok('taskId' in r, `a run accepted, got ${JSON.stringify(r)}`);
  return r;
}

/** An owner with a paid public agent (approved) on a fake host of the given capacity. */
async function paidAgent(capacity = 1) {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity });
  hosts.push(host);
  const a = await agentWhenReady(t.client(owner.key), { name: 'paid-helper', scope: 'public', pay: 'paid', step: 'submit', hostId, engine: 'claude-code', workDir: '' });
  await t.admin.admin.approveAgent(a.id);
  return { owner, host, agentId: a.id };
}

/** Starts `n` runs of `key` on the agent; answers their run.start frames. */
async function startRuns(key: string, agentId: string, host: FakeHost, n: number) {
  const before = host.frames.filter((f) => f.t === 'run.start').length;
  for (let i = 0; i < n; i++) accepted(await t.client(key).sessions.create({ agentId, content: `job ${i}` }));
  return eventually(async () => {
    const s = host.frames.filter((f) => f.t === 'run.start').slice(before);
    return s.length === n ? (s as any[]) : undefined;
  }, 5000, 10);
}

test('an owner earns only on what the runner\'s balance covered: reporting more usage than the runner holds mints nothing', async () => {
  const { owner, host, agentId } = await paidAgent();
  const runner = await t.user(); // 10,000 starter tokens
  const [start] = await startRuns(runner.key, agentId, host, 1);
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 50_000, outputTokens: 0 } });
  await eventually(async () => ((await balance(runner.key)) === 0 ? true : undefined), 5000, 50);
  // The runner pays what its balance held, 10,000 of the 50,000 reported; the owner earns 20 % of that.
  const spent = (await ledger(runner.key)).filter((x) => x.type === 'spend');
  assert.deepEqual(spent.map((x) => [x.amount, x.ref, x.balanceAfter]), [[-10_000, start.runId, 0]]);
  assert.match(spent[0].note ?? '', /charged 10000 of its 50000 tokens/, 'the entry says what was charged of what');
  assert.equal(await balance(owner.key), 10_000 + 2_000);
  const e = await earned(owner.key);
  assert.equal(e.length, 1);
  assert.deepEqual([e[0].amount, e[0].ref], [2_000, start.runId]);
  assert.match(e[0].note ?? '', /10000 of 50000/, 'the entry says what the share was taken on');
  const stats = await eventually(async () => {
    const s = await t.client(owner.key).agents.stats(agentId);
    return s.runs === 1 ? s : undefined;
  }, 3000, 50);
  assert.equal(stats.earn, 2_000, 'the agent\'s earn counter agrees with the ledger');
  assert.equal(stats.cost, 50_000);

  // Used up: the next message is refused until the runner buys tokens; then runs are charged as before.
  await assert.rejects(t.client(runner.key).sessions.create({ agentId, content: 'more' }), apiError(429, '4091'));
  await t.admin.admin.grantTokens(runner.id, 50); // 50,000 tokens
  assert.equal(await balance(runner.key), 50_000);
  const [second] = await startRuns(runner.key, agentId, host, 1);
  host.send({ t: 'run.end', runId: second.runId, ok: true, usage: { inputTokens: 30_000, outputTokens: 0 } });
  await eventually(async () => ((await balance(runner.key)) === 20_000 ? true : undefined), 5000, 50);
  assert.equal(await balance(owner.key), 10_000 + 2_000 + 6_000, 'the second run, covered in full, earned on all of it');
  for (const u of [runner, owner]) {
    const l = await ledger(u.key);
    assert.equal(l.reduce((s, x) => s + x.amount, 0), await balance(u.key), 'the ledger adds up to the balance');
  }
});

test('two runs of one runner ended together share its balance: the owner earns on 10,000 in all, whatever their order', async () => {
  const { owner, host, agentId } = await paidAgent(2);
  const runner = await t.user();
  const starts = await startRuns(runner.key, agentId, host, 2);
  // Both ends in one frame turn: they are written in one batch (one call of hub_charge_runs) or two.
  for (const s of starts) host.send({ t: 'run.end', runId: s.runId, ok: true, usage: { inputTokens: 8_000, outputTokens: 0 } });
  await eventually(async () => ((await balance(runner.key)) === 0 ? true : undefined), 5000, 50);
  // 8,000 covered in full (1,600) and 2,000 of the other (400); the runner paid those, 10,000 in all.
  assert.deepEqual((await earned(owner.key)).map((e) => e.amount).sort((a, b) => a - b), [400, 1_600]);
  assert.equal(await balance(owner.key), 10_000 + 2_000);
});

test('usage past the per-run bound is a bad frame: the channel closes and nothing is charged', async () => {
  const { owner, host, agentId } = await paidAgent();
  const runner = await t.user();
  const [start] = await startRuns(runner.key, agentId, host, 1);
  // Raw MessagePack: the protocol's encoder would refuse this frame.
  host.send(encode({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: MAX_RUN_TOKENS + 1, outputTokens: 0 } }));
  assert.equal((await host.closed).code, CloseCodes.BAD_FRAME.code);
  // Past bigint, too (2^64: a float in MessagePack), which once would have failed the whole end batch.
  const again = await connectFakeHost(t, (await pairHost(t, owner.key, 'second')).credential, { capacity: 1 });
  hosts.push(again);
  again.send(encode({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 2 ** 64, outputTokens: 0 } }));
  assert.equal((await again.closed).code, CloseCodes.BAD_FRAME.code);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await balance(runner.key), 10_000);
  assert.equal(await balance(owner.key), 10_000);
  assert.equal((await earned(owner.key)).length, 0);
});

test('the reference host CLI holds an engine\'s usage to the bound, so its own run.end is never a bad frame', () => {
  assert.deepEqual(usageOf({ input_tokens: MAX_RUN_TOKENS, cache_read_input_tokens: 5, output_tokens: 2 ** 60 }), { inputTokens: MAX_RUN_TOKENS, outputTokens: MAX_RUN_TOKENS });
  assert.deepEqual(usageOf({ input_tokens: 10, cache_creation_input_tokens: 2, cache_read_input_tokens: 3, output_tokens: 4 }), { inputTokens: 15, outputTokens: 4 });
});
