// One batch of run ends on several hosts claims for all of them at once
// (hub_end_runs → hub_claim_many, claim-function.ts): each host keeps its own
// rule — its capacity, one run per session, the oldest waiting session first,
// nothing while its settings lease is held, nothing for a user without
// balance — and a host whose capacity the caller does not know is only
// reported. hub_claim(host, cap), the one-host form, gives the same answer.
// The batch is written here as run-end.ts writes it, so its hosts are sure to
// end in one call; the runs themselves were started by the hub.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import { claimOf, type ClaimRow } from '../src/sessions/queue.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of hosts) h.close();
  await t.close();
});

const sql = <T = any>(q: string, params: unknown[] = []) => t.hub.ctx.em().getConnection().execute<T[]>(q, params);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A host of `capacity` with an agent and `sessions` sessions of the user `key`; `runOf(prompt)` is the run a prompt started. */
async function setup(key: string, name: string, capacity: number, sessions: number) {
  const { hostId, credential } = await pairHost(t, key, name);
  const host = await connectFakeHost(t, credential, { capacity });
  hosts.push(host);
  const starts = new Map<string, string>();
  host.ws.on('message', (data: Buffer) => {
    const f = decodeHubFrame(data).frame as any;
    if (f?.t === 'run.start') starts.set(f.prompt, f.runId);
  });
  const c = t.client(key);
  const agent = await agentWhenReady(c, { name, scope: 'private', hostId, engine: 'claude-code' });
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) ids.push(((await c.sessions.create({ agentId: agent.id })) as SessionView).id);
  const send = async (i: number, content: string, status: 'processing' | 'queued') =>
    assert.equal((await c.sessions.send(ids[i], { content })).status, status, content);
  const runOf = (prompt: string) => eventually(async () => starts.get(prompt), 5000, 10);
  return { hostId, ids, send, runOf, starts };
}

/** A run's end as run-end.ts hands it to hub_end_runs: no rows, no usage. */
const endOf = (run: string, sid: string, hid: string) => ({
  run, sid, hid, aid: null, engine: 'claude-code', ok: true, aborted: false, tin: 0, tout: 0, cost: 0, share: 0,
  model: null, esid: null, ecode: null, emsg: null, amodel: null, n: 0, texts: 0, fresh: 0, last: null, partial: null, rows: [],
});

async function statusOf(prompt: string): Promise<string> {
  const r = await sql<{ status: string }>(
    `select t.status from session_tasks t join session_messages m on m.id = t.message_id where m.content = ?`, [prompt]);
  assert.equal(r.length, 1, prompt);
  return r[0].status;
}

test('one batch of ends on several hosts starts each host\'s next runs by its own rule', async () => {
  const rich = await t.user('rich');
  const broke = await t.user('broke');
  const a = await setup(rich.key, 'host-a', 2, 3);
  const b = await setup(rich.key, 'host-b', 1, 2);
  const c = await setup(rich.key, 'host-c', 1, 1);
  const d = await setup(broke.key, 'host-d', 1, 1);
  const e = await setup(rich.key, 'host-e', 1, 1);

  // A (capacity 2): two runs, then waiting A1-2 (session 0), A3-1 and A3-2 (session 2), A2-2 (session 1).
  await a.send(0, 'A1-1', 'processing');
  await a.send(1, 'A2-1', 'processing');
  await a.send(0, 'A1-2', 'queued');
  await a.send(2, 'A3-1', 'queued');
  await a.send(2, 'A3-2', 'queued');
  await a.send(1, 'A2-2', 'queued');
  // B (capacity 1): a run, then waiting B2-1 (the older session) and B1-2.
  await b.send(0, 'B1-1', 'processing');
  await b.send(1, 'B2-1', 'queued');
  await b.send(0, 'B1-2', 'queued');
  // C: its settings lease is held when its run ends. D: its user's balance is gone. E: its capacity is not known here.
  for (const [h, p] of [[c, 'C'], [d, 'D'], [e, 'E']] as const) {
    await h.send(0, `${p}1-1`, 'processing');
    await h.send(0, `${p}1-2`, 'queued');
  }
  const runs = {
    a1: await a.runOf('A1-1'), a2: await a.runOf('A2-1'), b: await b.runOf('B1-1'),
    c: await c.runOf('C1-1'), d: await d.runOf('D1-1'), e: await e.runOf('E1-1'),
  };
  await sleep(150); // let any drain the sends planned finish
  await sql(`update hosts set settings_until = now() + interval '1 hour' where id = ?`, [c.hostId]);
  await sql(`update users set balance = 0 where id = ?`, [broke.id]);

  const batch = [
    endOf(runs.a1, a.ids[0], a.hostId), endOf(runs.a2, a.ids[1], a.hostId), endOf(runs.b, b.ids[0], b.hostId),
    endOf(runs.c, c.ids[0], c.hostId), endOf(runs.d, d.ids[0], d.hostId), endOf(runs.e, e.ids[0], e.hostId),
  ];
  const caps = { [a.hostId]: 2, [b.hostId]: 1, [c.hostId]: 1, [d.hostId]: 1 };
  const out = await sql<{ o_run: string | null; o_status: string | null; o_waiting_host: string | null; o_claim: ClaimRow[] | null }>(
    `select * from hub_end_runs(?::jsonb, ?::jsonb)`, [JSON.stringify(batch), JSON.stringify(caps)]);

  assert.deepEqual(out.filter((r) => r.o_run).map((r) => [r.o_run, r.o_status]).sort(),
    Object.values(runs).map((r) => [r, 'completed']).sort(), 'every run ended');
  const waiting = out.filter((r) => r.o_waiting_host);
  const all = [a, b, c, d, e].map((h) => h.hostId);
  assert.deepEqual(waiting.map((r) => r.o_waiting_host), [...all].sort(), 'each host with waiting work once, in host id order');
  const claim = (hid: string) => {
    const r = waiting.find((w) => w.o_waiting_host === hid)!;
    return r.o_claim && claimOf(typeof r.o_claim === 'string' ? JSON.parse(r.o_claim) : r.o_claim);
  };
  const prompts = (hid: string) => claim(hid)!.tasks.map((x) => x.prompt);

  assert.deepEqual(prompts(a.hostId), ['A1-2', 'A3-1'], 'A: its two free slots, the oldest sessions first, one run per session');
  assert.equal(claim(a.hostId)!.skipped, false);
  assert.deepEqual(prompts(b.hostId), ['B2-1'], 'B: the session that waited longest');
  assert.ok((claim(c.hostId)!.leaseMs ?? 0) > 0, 'C: the lease is reported');
  assert.deepEqual(prompts(c.hostId), [], 'C: nothing while the lease is held');
  assert.deepEqual(prompts(d.hostId), [], 'D: nothing for a user without balance');
  assert.equal(claim(e.hostId), null, 'E: reported only, its capacity is not known here');
  for (const x of claim(a.hostId)!.tasks) assert.equal(x.hostId, a.hostId);

  const expect: Record<string, string> = {
    'A1-2': 'running', 'A3-1': 'running', 'A3-2': 'queued', 'A2-2': 'queued', 'B2-1': 'running', 'B1-2': 'queued',
    'C1-2': 'queued', 'D1-2': 'queued', 'E1-2': 'queued',
  };
  for (const [p, s] of Object.entries(expect)) assert.equal(await statusOf(p), s, p);
  const slots = await sql<{ id: string; running_task_id: string | null }>(
    `select id, running_task_id from sessions where id in (?, ?, ?)`, [a.ids[0], a.ids[1], a.ids[2]]);
  assert.deepEqual(slots.filter((s) => s.running_task_id).map((s) => s.id).sort(), [a.ids[0], a.ids[2]].sort(), 'A: the started sessions hold their slots');

  // The one-host form: same rule, same rows (the summary first).
  const full = await sql<ClaimRow>(`select * from hub_claim(?, ?)`, [a.hostId, 2]);
  assert.deepEqual(full.map((r) => [r.o_kind, r.o_picked]), [['meta', 0]], 'A is full at capacity 2');
  const more = await sql<ClaimRow>(`select * from hub_claim(?, ?)`, [a.hostId, 3]);
  assert.deepEqual(more.map((r) => [r.o_kind, r.o_picked, r.prompt ?? null]), [['meta', 1, null], ['task', null, 'A2-2']], 'A at capacity 3: the idle session next');
  const leased = claimOf(await sql<ClaimRow>(`select * from hub_claim(?, ?)`, [c.hostId, 1]));
  assert.ok((leased.leaseMs ?? 0) > 0 && leased.tasks.length === 0, 'C: still leased');
  const gone = await sql<ClaimRow>(`select * from hub_claim(?, ?)`, ['host_missing', 1]);
  assert.deepEqual(gone.map((r) => [r.o_kind, r.o_lease_ms, r.o_picked]), [['meta', null, 0]], 'an unknown host: a summary, nothing started');

  // Several hosts in one call, the form hub_end_runs uses: a summary per host asked for, then the tasks started.
  const many = await sql<ClaimRow & { o_host: string }>(`select * from hub_claim_many(?::jsonb)`,
    [JSON.stringify({ [a.hostId]: 4, [b.hostId]: 2, [c.hostId]: 1, host_missing: 1 })]);
  const of = (hid: string) => many.filter((r) => r.o_host === hid);
  assert.deepEqual(of(a.hostId).map((r) => [r.o_kind, r.o_picked]), [['meta', 0]], 'A: a free slot, but every waiting session is busy');
  assert.deepEqual(of(b.hostId).map((r) => [r.o_kind, r.o_picked, r.prompt ?? null]), [['meta', 1, null], ['task', null, 'B1-2']], 'B: its idle session');
  assert.ok((of(c.hostId)[0]?.o_lease_ms ?? 0) > 0 && of(c.hostId).length === 1, 'C: the lease, nothing started');
  assert.deepEqual(of('host_missing').map((r) => [r.o_kind, r.o_picked]), [['meta', 0]]);
  assert.equal(many.length, 5, 'four summaries, one task');
  assert.equal(await statusOf('B1-2'), 'running');
});
