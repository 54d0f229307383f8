// What a message writes to PostgreSQL: every message updates its session row
// twice (the accept, the run's end). Those updates must be HOT (heap-only: the
// new row version on the same page, no index entry written), which PostgreSQL
// does only when no index covers a column the update changes; a non-HOT update
// writes one entry into every index of the table, each one logged in the WAL
// (bench/dispatch.ts reports WAL bytes per message). The functions
// are called here as the hub calls them, inside a transaction that is rolled
// back; pg_stat_xact_user_tables counts that transaction's own updates. The
// rows a message inserts get time-ordered ids (test/ids.test.ts), its charge's
// ledger entry too.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import { rows, tx, type Em } from '../src/sessions/sql.js';
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

class Rollback extends Error {}

/** Runs `fn` in a transaction that is rolled back, returning what it returned. */
async function rolledBack<T>(fn: (em: Em) => Promise<T>): Promise<T> {
  let out: T | undefined;
  await tx(t.hub.ctx.em(), async (em) => {
    out = await fn(em);
    throw new Rollback();
  }).catch((e) => {
    if (!(e instanceof Rollback)) throw e;
  });
  return out as T;
}

/** This transaction's updates of `table` so far: all, and those that were HOT. */
async function updates(em: Em, table: string) {
  const [r] = await rows<{ upd: string; hot: string }>(em,
    `select n_tup_upd as upd, n_tup_hot_upd as hot from pg_stat_xact_user_tables where relname = ?`, [table]);
  return { upd: Number(r.upd), hot: Number(r.hot) };
}

/** A user with a host, an agent and a session whose first message ('first') is running: their ids, the run's, and `runOf(prompt)`. */
async function running() {
  const u = await t.user('writer');
  const { hostId, credential } = await pairHost(t, u.key, 'write-cost');
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  const starts = new Map<string, string>();
  host.ws.on('message', (data: Buffer) => {
    const f = decodeHubFrame(data).frame as any;
    if (f?.t === 'run.start') starts.set(f.prompt, f.runId);
  });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'write-cost', scope: 'private', hostId, engine: 'claude-code' });
  const session = (await c.sessions.create({ agentId: agent.id })) as SessionView;
  assert.equal((await c.sessions.send(session.id, { content: 'first' })).status, 'processing');
  const runOf = (prompt: string) => eventually(async () => starts.get(prompt), 5000, 10);
  return { uid: u.id, hostId, agentId: agent.id, sid: session.id, run: await runOf('first'), host, c, runOf };
}

test('a message\'s accept and its run\'s end update the session row in place (HOT: no index covers what they write)', async () => {
  const r = await running();

  // A second message while the first runs: it waits (session_busy), and the accept still updates the session.
  const accepted = await rolledBack(async (em) => {
    const batch = [{ ord: 0, sid: r.sid, uid: r.uid, tid: randomUUID(), mid: randomUUID(), content: 'second', hid: r.hostId, cap: 1,
      aid: r.agentId, engine: 'claude-code', wd: '/tmp', mode: null, effort: null }];
    const out = await rows<{ o_outcome: string }>(em, `select * from hub_accept(?::jsonb, 10, null)`, [JSON.stringify(batch)]);
    assert.deepEqual(out.map((o) => o.o_outcome), ['session_busy']);
    return updates(em, 'sessions');
  });
  assert.ok(accepted.upd >= 1, `the accept updated the session (${JSON.stringify(accepted)})`);
  assert.equal(accepted.hot, accepted.upd, 'every update of the session by the accept is HOT');

  // The run's end with one assistant text: the session's counters, last message and its time change.
  const ended = await rolledBack(async (em) => {
    const end = { run: r.run, sid: r.sid, hid: r.hostId, aid: null, engine: 'claude-code', ok: true, aborted: false, tin: 1, tout: 1, cost: 5, share: 0,
      model: null, esid: null, ecode: null, emsg: null, amodel: null, n: 1, texts: 1, fresh: 1, last: 'done', partial: null,
      rows: [{ id: randomUUID(), role: 'assistant', kind: 'text', content: 'done', off: 0 }] };
    const out = await rows<{ o_run: string | null; o_status: string | null }>(em, `select * from hub_end_runs(?::jsonb, '{}'::jsonb)`, [JSON.stringify([end])]);
    assert.deepEqual(out.filter((o) => o.o_run).map((o) => o.o_status), ['completed']);
    const [s] = await rows<{ last_message: string; running_task_id: string | null }>(em, `select last_message, running_task_id from sessions where id = ?`, [r.sid]);
    assert.deepEqual(s, { last_message: 'done', running_task_id: null });
    // Its charge's ledger entry: time first, so the ledger's primary key grows at its right edge too.
    const [led] = await rows<{ id: string }>(em, `select id from ledger_entries where ref = ? and type = 'spend'`, [r.run]);
    assert.match(led.id, /^led_[0-9a-f]{23}$/);
    assert.ok(Math.abs(parseInt(led.id.slice(4, 15), 16) - Date.now()) < 60_000, `${led.id} starts with the time`);
    return updates(em, 'sessions');
  });
  assert.ok(ended.upd >= 1, `the end updated the session (${JSON.stringify(ended)})`);
  assert.equal(ended.hot, ended.upd, 'every update of the session by the run\'s end is HOT');
});

test('the message path\'s rows carry no index that no read uses: one index entry fewer per row written', async () => {
  // session_tasks.n and session_messages.n come from sequences and are always read with their session or host
  // (session_messages_session, session_tasks_queued); a unique index on n alone was one more entry per row.
  const idx = await rows<{ tablename: string; indexname: string }>(t.hub.ctx.em(),
    `select tablename, indexname from pg_indexes where tablename in ('sessions', 'session_tasks', 'session_messages', 'ledger_entries') order by 1, 2`);
  const by = (table: string) => idx.filter((i) => i.tablename === table).map((i) => i.indexname);
  // session_messages_task (task_id) served only the marking of an interrupted run's rows (next test).
  assert.deepEqual(by('session_messages'), ['session_messages_pkey', 'session_messages_session']);
  // session_tasks_stopping is partial (engine_until is not null): only a run the hub aborted has an entry, read
  // by the host's capacity count (hub_accept, hub_claim_many) while its engine may still be stopping.
  // session_tasks_guest is partial too (gmin > 0, running or waiting): only runs on other accounts' agents have
  // an entry, read by the guest floor's counts (hub_accept, hub_claim_many).
  assert.deepEqual(by('session_tasks'), ['session_tasks_guest', 'session_tasks_pkey', 'session_tasks_queued', 'session_tasks_running', 'session_tasks_session', 'session_tasks_stopping']);
  assert.deepEqual(by('sessions'), ['sessions_agent', 'sessions_pkey', 'sessions_user_created']);
  // A charged run's entry: the ledger is read by user and time; ledger_ref (by run or order) served no read.
  assert.deepEqual(by('ledger_entries'), ['ledger_entries_pkey', 'ledger_user_time']);
});

test('an aborted run marks its own assistant rows interrupted, those written mid-run too, and no other run\'s', async () => {
  const r = await running();
  r.host.send({ t: 'run.message', runId: r.run, role: 'assistant', blocks: [{ kind: 'text', content: 'answer one' }] });
  r.host.send({ t: 'run.end', runId: r.run, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => ((await r.c.sessions.get(r.sid)).processing ? undefined : true), 5000, 10);

  assert.equal((await r.c.sessions.send(r.sid, { content: 'second' })).status, 'processing');
  const run2 = await r.runOf('second');
  r.host.send({ t: 'run.message', runId: run2, role: 'assistant', blocks: [{ kind: 'tool_use', toolName: 'Bash', toolId: 'tu_1', toolInput: { command: 'ls' } }] });
  r.host.send({ t: 'run.message', runId: run2, role: 'user', blocks: [{ kind: 'tool_result', toolId: 'tu_1', toolResult: { content: 'a', isError: false } }] });
  // Written mid-run, before the abort: the run's rows reach the database in batches (run-batch.ts).
  await eventually(async () => ((await r.c.sessions.messages(r.sid, { limit: 50 })).items.length === 5 ? true : undefined), 5000, 10);
  r.host.send({ t: 'run.delta', runId: run2, text: 'partial' });
  await r.host.ping();
  await r.c.sessions.abort(r.sid);

  const h = (await r.c.sessions.messages(r.sid, { limit: 50 })).items;
  assert.deepEqual(h.map((m) => [m.role, m.kind ?? 'text', m.content ?? null, m.interrupted === true]), [
    ['user', 'text', 'first', false],
    ['assistant', 'text', 'answer one', false],
    ['user', 'text', 'second', false],
    ['assistant', 'tool_use', null, true],
    ['user', 'tool_result', null, false],
    ['assistant', 'text', 'partial', true],
  ]);
});
