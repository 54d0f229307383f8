// Issue 10, hole 4: bounded memory per run and per host. A run that streams
// more than RUN_OUTPUT_MAX_BYTES is aborted on its host and ends with
// run.error OUTPUT_TOO_LARGE; a channel over its frame rate is closed with
// FRAME_RATE (4430); a session's replay ring is bounded in bytes; a run end
// whose database write fails is retried until it lands.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { SessionEvents } from '../src/sessions/events.js';
import { LocalBus } from '../src/bus/local.js';
import { HOST_CHECK_FROM_BYTES, HOST_OUTPUT_RUNS, RING_MAX_BYTES, RUN_END_BATCH_MAX_BYTES } from '../src/limits.js';
import { CloseCodes } from '../host-protocol/version.js';
import { injectDbFaults } from './helpers/db-faults.js';
import type { AcceptedRun, Client } from '../src/client/index.js';

const LIMIT = 256 * 1024;
let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ runOutputMaxBytes: LIMIT, hostFramesPerSecond: 200 });
});
after(async () => {
  for (const h of hosts) h.close();
  await t?.close();
});

async function hostWithAgent(name: string) {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, name);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name, hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  return { c, host, agent };
}

/** A session started with its first message: the plain 202 of its run. */
async function startSession(c: Client, agentId: string, content: string): Promise<AcceptedRun> {
  const r = (await c.sessions.create({ agentId, content })) as AcceptedRun;
  assert.ok(r.sessionId && r.taskId, 'a 202 with the run');
  return r;
}

const task = async (id: string) => (await t.hub.ctx.em().getConnection().execute(`select status, error_code from session_tasks where id = ?`, [id]))[0];

/** Runs `fn` with a trigger on session_messages whose plpgsql `body` decides each insert (fault injection in the real database). */
async function withMessageTrigger(name: string, body: string, fn: () => Promise<void>): Promise<void> {
  const db = t.hub.ctx.em().getConnection();
  await db.execute(`create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body} return new; end $$`);
  await db.execute(`create trigger ${name} before insert on session_messages for each row execute function ${name}()`);
  try {
    await fn();
  } finally {
    await db.execute(`drop trigger ${name} on session_messages`);
  }
}

test('a run streaming more than RUN_OUTPUT_MAX_BYTES is aborted and ends with OUTPUT_TOO_LARGE', async () => {
  const { c: cl, host, agent } = await hostWithAgent('flood');
  const c = await startSession(cl, agent.id, 'stream a lot');
  const start: any = await host.next((f) => f.t === 'run.start');
  const chunk = 'y'.repeat(32 * 1024);
  // 40 × 32 KiB = 1.25 MiB against a 256 KiB bound (within the frame rate's burst).
  for (let i = 0; i < 40; i++) host.send({ t: 'run.delta', runId: start.runId, text: chunk });
  const abort: any = await host.next((f) => f.t === 'run.abort');
  assert.equal(abort.runId, start.runId, 'the engine is told to stop');
  await eventually(async () => (await task(start.runId)).status === 'failed', 10_000, 25);
  assert.equal((await task(start.runId)).error_code, 'OUTPUT_TOO_LARGE');
  assert.equal((await cl.sessions.get(c.sessionId)).status, 'active');
  // What was kept of the streamed text stays within the bound.
  const kept = await t.hub.ctx.em().getConnection().execute(`select coalesce(sum(length(content)), 0)::int as n from session_messages where session_id = ? and role = 'assistant'`, [c.sessionId]);
  assert.ok(kept[0].n <= LIMIT, `kept ${kept[0].n} characters`);
  // The host's late run.end (aborted) is still accepted on its channel; the channel stays up.
  host.send({ t: 'run.end', runId: start.runId, ok: false, aborted: true, usage: { inputTokens: 2, outputTokens: 2 } });
  assert.ok(await host.ping() >= 0);
});

test('a host\'s runs together hold at most HOST_OUTPUT_RUNS × RUN_OUTPUT_MAX_BYTES: the run that would pass it ends OUTPUT_TOO_LARGE, the others go on', async () => {
  // Each run under its own bound, but many of them open at once on one host (its capacity is the host's
  // word) held ≈ 16 MiB each with the defaults, for as long as the host liked (found by an audit).
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'many-runs');
  const n = HOST_OUTPUT_RUNS + 2;
  const host = await connectFakeHost(t, credential, { capacity: n });
  hosts.push(host);
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'many-runs', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const runs: string[] = [];
  for (let i = 0; i < n; i++) {
    await startSession(c, agent.id, `run ${i}`);
    runs.push((await host.next((f) => f.t === 'run.start' && !runs.includes((f as any).runId)) as any).runId);
  }
  // Each run holds 90 % of its own bound: the first HOST_OUTPUT_RUNS fit; a later one passes the host's
  // (checked once per HOST_CHECK_FROM_BYTES a run takes, so the next run may still fit in that slack).
  const chunk = 'h'.repeat(Math.floor((LIMIT * 0.9) / 8));
  for (const runId of runs) for (let i = 0; i < 8; i++) host.send({ t: 'run.delta', runId, text: chunk });
  const abort: any = await host.next((f) => f.t === 'run.abort');
  assert.ok(runs.indexOf(abort.runId) >= HOST_OUTPUT_RUNS, 'a run past the host\'s bound');
  await eventually(async () => (await task(abort.runId)).error_code === 'OUTPUT_TOO_LARGE', 10_000, 25);
  const held = runs.indexOf(abort.runId) * 8 * chunk.length;
  assert.ok(held <= HOST_OUTPUT_RUNS * LIMIT + n * HOST_CHECK_FROM_BYTES, `the runs before it held ${held} bytes`);
  for (const runId of runs.slice(0, HOST_OUTPUT_RUNS)) assert.equal((await task(runId)).status, 'running', 'within the bound: untouched');
  for (const runId of runs) host.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => (await Promise.all(runs.map(task))).every((r) => r.status !== 'running'), 10_000, 25);
});

test('complete messages count too: rows held unwritten are bounded', async () => {
  const { c: cl, host, agent } = await hostWithAgent('flood-messages');
  await startSession(cl, agent.id, 'messages');
  const start: any = await host.next((f) => f.t === 'run.start');
  const big = 'z'.repeat(64 * 1024);
  for (let i = 0; i < 20; i++) host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'thinking', content: big }] });
  await host.next((f) => f.t === 'run.abort');
  await eventually(async () => (await task(start.runId)).error_code === 'OUTPUT_TOO_LARGE', 10_000, 25);
});

test('run ends arriving together are written in calls bounded in bytes, not one statement of every run\'s output', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'many-ends');
  const host = await connectFakeHost(t, credential, { capacity: 6 });
  hosts.push(host);
  const cl = t.client(u.key);
  const agent = await agentWhenReady(cl, { name: 'many-ends', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const runs: string[] = [];
  for (let i = 0; i < 6; i++) {
    await startSession(cl, agent.id, `turn ${i}`);
    runs.push(((await host.next((f) => f.t === 'run.start' && !runs.includes(f.runId))) as any).runId);
  }
  // Each run streams 224 KiB (under its 256 KiB bound): 1.3 MiB in all, over RUN_END_BATCH_MAX_BYTES.
  const chunk = 'q'.repeat(32 * 1024);
  for (const runId of runs) for (let i = 0; i < 7; i++) host.send({ t: 'run.delta', runId, text: chunk });
  const calls = async () => {
    const m = await t.hub.ctx.metrics.registry.getSingleMetric('hub_db_call_duration_seconds')!.get();
    return m.values.find((v) => (v as { metricName?: string }).metricName === 'hub_db_call_duration_seconds_count' && v.labels.function === 'hub_end_runs')?.value ?? 0;
  };
  await host.ping(); // every delta is in before the ends
  const before = await calls();
  for (const runId of runs) host.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => {
    for (const id of runs) if ((await task(id)).status !== 'completed') return false;
    return true;
  }, 10_000, 25);
  assert.ok(RUN_END_BATCH_MAX_BYTES < 6 * 7 * chunk.length, 'the runs together are over the bound');
  assert.ok((await calls()) - before >= 2, `the six ends took ${(await calls()) - before} call(s) of hub_end_runs`);
});

test('a host\'s text holding NUL (PostgreSQL refuses it) is kept with U+FFFD and the run still ends: it no longer stayed running, its end retried forever', async () => {
  // An engine reading a binary file can put a NUL in a tool result as easily as a hostile host can.
  const { c: cl, host, agent } = await hostWithAgent('nul-text');
  const c = await startSession(cl, agent.id, 'read the binary');
  const start: any = await host.next((f) => f.t === 'run.start');
  host.send({ t: 'run.init', runId: start.runId, model: 'mo\u0000del', engineSessionId: 'es\u0000' });
  host.send({ t: 'run.delta', runId: start.runId, text: 'a\u0000b' });
  host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'tool_use', toolName: 'Read\u0000', toolId: 't\u00001', toolInput: { 'pa\u0000th': 'bin\u0000.dat', list: ['\u0000'] } }] });
  host.send({ t: 'run.message', runId: start.runId, role: 'user', blocks: [{ kind: 'tool_result', toolId: 't\u00001', toolResult: { content: 'ELF\u0000\u0000\u0001', isError: false } }] });
  host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'x\u0000y' }] });
  host.send({ t: 'run.end', runId: start.runId, ok: false, error: { code: 'E\u0000', message: 'm\u0000' }, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => (await task(start.runId)).status === 'failed', 10_000, 25);
  const items: any[] = (await cl.sessions.messages(c.sessionId)).items;
  assert.equal(JSON.stringify(items).includes('\\u0000'), false, 'no NUL stored');
  assert.deepEqual(items.filter((m) => m.kind === 'text').map((m) => m.content), ['read the binary', 'x\ufffdy']);
  const use = items.find((m) => m.kind === 'tool_use');
  assert.equal(use.toolName, 'Read\ufffd');
  assert.deepEqual(use.toolInput, { 'pa\ufffdth': 'bin\ufffd.dat', list: ['\ufffd'] });
  assert.equal(items.find((m) => m.kind === 'tool_result').toolResult.content, 'ELF\ufffd\ufffd\u0001');
  // The session is free: the next message starts at once.
  await cl.sessions.send(c.sessionId, { content: 'again' });
  await host.next((f) => f.t === 'run.start' && f.runId !== start.runId);
});

test('a run whose output the database refuses as data still ends (failed, HOST_BAD_REPLY, usage kept): its end was retried forever, its session busy', async () => {
  // The database itself refuses one row (a trigger raising a data exception, SQLSTATE 22023): what
  // PostgreSQL cannot store is refused on every retry, whatever the cause.
  const db = t.hub.ctx.em().getConnection();
  await withMessageTrigger('refuse_poison', `if new.content = 'poison row' then raise exception 'refused' using errcode = '22023'; end if;`, async () => {
    const { c: cl, host, agent } = await hostWithAgent('poison');
    const c = await startSession(cl, agent.id, 'poison me');
    const start: any = await host.next((f) => f.t === 'run.start');
    host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'poison row' }] });
    host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 7, outputTokens: 3 } });
    await eventually(async () => (await task(start.runId)).status === 'failed', 10_000, 25);
    assert.equal((await task(start.runId)).error_code, 'HOST_BAD_REPLY');
    const used = (await db.execute(`select input_tokens, output_tokens from session_tasks where id = ?`, [start.runId]))[0];
    assert.deepEqual([Number(used.input_tokens), Number(used.output_tokens)], [7, 3], 'its usage is kept');
    await cl.sessions.send(c.sessionId, { content: 'next' });
    await host.next((f) => f.t === 'run.start' && f.runId !== start.runId);
  });
});

test('rows whose mid-run write failed are written again, not dropped: in a second, and with the end', async () => {
  // The first insert of the row fails as a transient error would (SQLSTATE 40001); a sequence,
  // which a failed statement does not roll back, lets the second through.
  const db = t.hub.ctx.em().getConnection();
  await db.execute(`create sequence flaky_once`);
  await withMessageTrigger('flaky_once', `if new.content in ('flaky row', 'flaky end') and nextval('flaky_once') % 2 = 1 then raise exception 'try again' using errcode = '40001'; end if;`, async () => {
    const { c: cl, host, agent } = await hostWithAgent('flaky');
    const c = await startSession(cl, agent.id, 'flaky turn');
    const start: any = await host.next((f) => f.t === 'run.start');
    host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'flaky row' }] });
    const texts = async () => (await cl.sessions.messages(c.sessionId)).items.filter((m: any) => m.role === 'assistant').map((m: any) => m.content);
    await eventually(async () => (await texts()).includes('flaky row'), 5_000, 50); // written by the retry, mid-run
    host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'after' }] });
    host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => (await task(start.runId)).status === 'completed', 10_000, 25);
    assert.deepEqual(await texts(), ['flaky row', 'after'], 'each row once, in order');
    // The run ends before the retry: the row goes with its end.
    await cl.sessions.send(c.sessionId, { content: 'second turn' });
    const again: any = await host.next((f) => f.t === 'run.start' && f.runId !== start.runId);
    host.send({ t: 'run.message', runId: again.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'flaky end' }] });
    await new Promise((r) => setTimeout(r, 300)); // its flush (20 ms) has failed; the retry is a second away
    host.send({ t: 'run.end', runId: again.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => (await task(again.runId)).status === 'completed', 10_000, 25);
    assert.deepEqual(await texts(), ['flaky row', 'after', 'flaky end']);
  });
  await db.execute(`drop sequence flaky_once`);
});

test('rows stored by a mid-run write whose answer was lost are not written twice: the run completes (it read failed, its rows refused as duplicates)', async () => {
  // The write commits, then its caller sees the connection drop (as when it is lost after the commit).
  let lose = 0;
  const restore = injectDbFaults(t.hub.ctx, (sql, run) => {
    if (lose <= 0 || !sql.includes('insert into session_messages') || !sql.includes('next_seq = next_seq + ?')) return undefined;
    lose--;
    return run().then(() => Promise.reject(new Error('injected: Connection terminated unexpectedly')));
  });
  try {
    const { c: cl, host, agent } = await hostWithAgent('lost-answer');
    const c = await startSession(cl, agent.id, 'first turn');
    const history = async () => (await cl.sessions.messages(c.sessionId)).items.filter((m: any) => m.role === 'assistant').map((m: any) => m.kind === 'tool_use' ? `tool:${m.toolName}` : m.content);
    const turn = async (runId: string, text: string, endAfterMs: number, meanwhile?: string) => {
      lose = 1;
      host.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content: text }, { kind: 'tool_use', toolName: 'Grep', toolId: `tool-${runId}`, toolInput: { q: text } }] });
      await eventually(async () => lose === 0 || undefined, 5_000, 10);
      // A row that arrives before the retry is not the failed call's: it must be written, not taken as stored with it.
      if (meanwhile) host.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content: meanwhile }] });
      await new Promise((r) => setTimeout(r, endAfterMs));
      host.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
      await eventually(async () => (await task(runId)).status !== 'running', 10_000, 25);
      assert.deepEqual(await task(runId), { status: 'completed', error_code: null });
    };
    // Given back, written again by the retry a second later; then with the run's end, before the retry.
    await turn(((await host.next((f) => f.t === 'run.start')) as any).runId, 'stored once', 1_500, 'arrived meanwhile');
    await cl.sessions.send(c.sessionId, { content: 'second turn' });
    await turn(((await host.next((f) => f.t === 'run.start' && f.prompt === 'second turn')) as any).runId, 'stored once again', 100);
    assert.deepEqual(await history(), ['stored once', 'tool:Grep', 'arrived meanwhile', 'stored once again', 'tool:Grep'], 'each row once, in order');
  } finally {
    restore();
  }
});

test('a channel over its frame rate is closed with FRAME_RATE (4430)', async () => {
  const { host } = await hostWithAgent('chatty');
  for (let i = 0; i < 2000; i++) host.send({ t: 'ping', id: i + 1, ts: Date.now() });
  const closed = await host.closed;
  assert.equal(closed.code, CloseCodes.FRAME_RATE.code);
  assert.equal(closed.code, 4430);
});

test('the replay ring\'s bound counts UTF-8 bytes, not characters, and replays multi-byte text exactly', () => {
  const events = new SessionEvents(new LocalBus());
  const delta = '漢é'.repeat(20 * 1024); // 40 Ki characters, 100 KiB of UTF-8 (JSON keeps them as they are)
  for (let i = 0; i < 200; i++) events.emit('ses_utf8', 'run_utf8', 'message.delta', { delta: `${i}:${delta}` });
  // What the ring still holds, read through replay alone: the first resume point it can serve.
  let held: NonNullable<ReturnType<SessionEvents['replay']>> | undefined;
  for (let after = 0; after <= 201 && !held; after++) held = events.replay('ses_utf8', 'run_utf8', after) ?? undefined;
  assert.ok(held?.length);
  const bytes = held.reduce((a, e) => a + Buffer.byteLength(e.frame), 0);
  assert.ok(bytes <= RING_MAX_BYTES, `the ring holds ${bytes} bytes of frames, over its bound of ${RING_MAX_BYTES}`);
  assert.ok(bytes > RING_MAX_BYTES / 2);
  assert.equal(events.ringBytes('ses_utf8'), bytes);
  const last = held[held.length - 1];
  assert.equal(last.n, 201);
  assert.equal(last.frame, `id: run_utf8:201\nevent: message.delta\ndata: ${JSON.stringify({ sessionId: 'ses_utf8', status: 'processing', delta: `199:${delta}` })}\n\n`);
});

test('a session\'s replay ring is bounded in bytes; a resume from before its window gets live events only', () => {
  const events = new SessionEvents(new LocalBus());
  const delta = 'd'.repeat(100 * 1024);
  for (let i = 0; i < 200; i++) events.emit('ses_ring', 'run_ring', 'message.delta', { delta }); // ≈ 20 MiB emitted
  assert.ok(events.ringBytes('ses_ring') <= RING_MAX_BYTES, `ring holds ${events.ringBytes('ses_ring')}`);
  assert.ok(events.ringBytes('ses_ring') > RING_MAX_BYTES / 2);
  assert.equal(events.replay('ses_ring', 'run_ring'), null, 'the window no longer reaches the start');
  const tail = events.replay('ses_ring', 'run_ring', 195)!;
  assert.deepEqual(tail.map((e) => e.n), [196, 197, 198, 199, 200, 201]);
  events.close();
});

test('a run end whose write fails is retried until it lands: the session does not stay processing', async () => {
  const { c: cl, host, agent } = await hostWithAgent('flaky-db');
  const c = await startSession(cl, agent.id, 'end me');
  const start: any = await host.next((f) => f.t === 'run.start');
  // The next three writes of a run's end fail as on a dropped connection.
  let failures = 3;
  const restore = injectDbFaults(t.hub.ctx, (sql) => {
    if (!sql.includes('hub_end_runs') || failures <= 0) return undefined;
    failures--;
    return Promise.reject(new Error('injected: Connection terminated unexpectedly'));
  });
  try {
    host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'the answer' }] });
    host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => (await cl.sessions.get(c.sessionId)).status === 'active', 20_000, 50);
  } finally {
    restore();
  }
  assert.equal(failures, 0, 'the write failed three times first');
  assert.equal((await task(start.runId)).status, 'completed');
  const texts = await t.hub.ctx.em().getConnection().execute(`select content from session_messages where session_id = ? and role = 'assistant'`, [c.sessionId]);
  assert.deepEqual(texts.map((r: any) => r.content), ['the answer'], 'the rows are written once');
});
