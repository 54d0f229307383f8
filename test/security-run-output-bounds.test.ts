// What one run may make the hub STORE, not only hold unsaved (audit, forty-sixth session).
// RUN_OUTPUT_MAX_BYTES bounds a run's streamed text plus rows not yet written; rows written by the
// mid-run flush (every FLUSH_MS) left that count, so a host that paced complete run.message frames
// (each under the bound, within the frame rate) made one run store any number of bytes in
// session_messages. Now a run's messages count against RUN_STORED_MAX_BYTES as they come, never
// decreasing: past it the engine is aborted and the run ends OUTPUT_TOO_LARGE.
//
// Tool ids and names a host sends are held per run, and were never counted (audit, forty-sixth session).
// frameBytes (src/limits.ts) counts a run.message as 64 bytes plus its blocks' content, toolInput and
// toolResult — not toolId or toolName (each up to 200 characters, 500 blocks a frame). The run's
// toolSeq and toolNames maps (src/sessions/run-batch.ts) keep every distinct toolId for the run's whole
// life, so one run of a host's can grow a hub node's memory (≈ 200 KB a frame, at up to
// HOST_FRAMES_PER_SECOND frames a second) while RUN_OUTPUT_MAX_BYTES and the host's bound see almost
// nothing. Now they count against the run's bound for its whole life (the run ends OUTPUT_TOO_LARGE,
// what it holds staying within RUN_OUTPUT_MAX_BYTES), and into the frame's size.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';

const LIMIT = 256 * 1024;
let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ runOutputMaxBytes: LIMIT, runStoredMaxBytes: LIMIT, hostFramesPerSecond: 200 });
});
after(async () => {
  for (const h of hosts) h.close();
  await t?.close();
});

/**
 * Waits for the hub to have written the run's end (it stops a run over its bound by ending it), however
 * late that write comes; a run still going after 10 s is left to the assertions, which then say what it holds.
 */
async function ended(runId: string): Promise<void> {
  const db = t.hub.ctx.em().getConnection();
  await eventually(async () => (await db.execute(`select status from session_tasks where id = ?`, [runId]))[0]?.status !== 'running' || undefined, 10_000, 20)
    .catch(() => {});
}

test('a run cannot store more than RUN_STORED_MAX_BYTES of output by pacing complete messages', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'pacer');
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'pacer', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const r = (await c.sessions.create({ agentId: agent.id, content: 'go' })) as AcceptedRun;
  const start: any = await host.next((f) => f.t === 'run.start');

  // 64 complete messages of 64 KiB each = 4 MiB, 16 × the run's bound; paced so each is flushed
  // before the next arrives (what an engine printing a long answer in messages looks like).
  const chunk = 'z'.repeat(64 * 1024);
  for (let i = 0; i < 64; i++) {
    if (host.frames.some((f) => f.t === 'run.abort')) break;
    host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: chunk }] });
    await sleep(40);
  }
  const db = t.hub.ctx.em().getConnection();
  await ended(start.runId);
  const [kept] = await db.execute(`select coalesce(sum(octet_length(content)), 0)::bigint as n from session_messages where session_id = ? and role = 'assistant'`, [r.sessionId]);
  const [task] = await db.execute(`select status, error_code from session_tasks where id = ?`, [start.runId]);
  const stored = Number(kept.n);
  assert.ok(stored <= LIMIT,
    `one run stored ${stored} bytes of output (${(stored / LIMIT).toFixed(1)} × RUN_STORED_MAX_BYTES = ${LIMIT}); run still ${task.status}, error ${task.error_code ?? 'none'}`);
  assert.equal(task.error_code, 'OUTPUT_TOO_LARGE');
  assert.ok(host.frames.some((f) => f.t === 'run.abort'), 'the engine is stopped');
});

test('tool ids and names a run holds in memory count against RUN_OUTPUT_MAX_BYTES', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'tools');
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'tools', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  await c.sessions.create({ agentId: agent.id, content: 'go' });
  const start: any = await host.next((f) => f.t === 'run.start');

  // 20 frames × 500 tool_use blocks, each a distinct 200-character id and a 200-character name, no payload.
  const name = 'n'.repeat(200);
  for (let i = 0; i < 20; i++) {
    if (host.frames.some((f) => f.t === 'run.abort')) break;
    const blocks = Array.from({ length: 500 }, (_, j) => ({ kind: 'tool_use' as const, toolId: `${i}-${j}-`.padEnd(200, 'i'), toolName: name }));
    host.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks });
    await sleep(40);
  }
  await ended(start.runId);
  const st: any = (t.hub.runFrames.runs as any).states.get(start.runId);
  let held = 0;
  if (st) for (const [k, v] of st.toolNames) held += k.length + v.length;
  // toolSeq holds the same id strings as keys: not counted twice.
  const [task] = await t.hub.ctx.em().getConnection().execute(`select status, error_code from session_tasks where id = ?`, [start.runId]);
  assert.ok(held <= LIMIT,
    `one run holds ${st?.toolNames.size ?? 0} tool ids, ${held} characters in memory (${(held / LIMIT).toFixed(1)} × RUN_OUTPUT_MAX_BYTES = ${LIMIT}); run ${task.status}, error ${task.error_code ?? 'none'}`);
  assert.equal(task.error_code, 'OUTPUT_TOO_LARGE', 'the run that kept sending tool ids was stopped');
});
