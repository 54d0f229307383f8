// A history page is bounded in bytes as well as in rows (HISTORY_PAGE_MAX_BYTES): a host may store
// rows of about a megabyte each, so 50 of them made one GET of 50 MB (the node read and built it
// whole; ten at once grew a node by about 900 MB). A page stops before the bound (one row at least)
// and says hasMore; paging on with its cursor reads the rest, every row once.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';
import { HISTORY_PAGE_MAX_BYTES } from '../src/limits.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('a history page holds at most HISTORY_PAGE_MAX_BYTES of content; the cursor pages through every row once', async () => {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const c = t.client(owner.key);
  const a = await agentWhenReady(c, { name: 'big-history', hostId, engine: 'claude-code' });
  const r = (await c.sessions.create({ agentId: a.id, content: 'go' })) as SessionView | AcceptedRun;
  assert.ok('taskId' in r);
  await host.next((f) => f.t === 'run.start' && (f as any).runId === r.taskId);
  const block = (i: number) => ({ kind: 'text' as const, content: String(i).padEnd(950_000, 'x') });
  // Each message stored before the next is sent: unsaved output past RUN_OUTPUT_MAX_BYTES (8 MiB; these are
  // 2.85 MB each) stops the run, which a slow database under load once let happen here (10 rows of 13).
  const stored = async () => Number((await t.hub.ctx.em().getConnection().execute(`select count(*)::int as n from session_messages where session_id = ?`, [r.sessionId]))[0].n);
  for (let i = 0; i < 4; i++) {
    host.send({ t: 'run.message', runId: r.taskId, role: 'assistant', blocks: [block(i * 3), block(i * 3 + 1), block(i * 3 + 2)] });
    await eventually(async () => ((await stored()) >= 1 + 3 * (i + 1) ? true : undefined), 20_000, 50);
  }
  host.send({ t: 'run.end', runId: r.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => ((await c.sessions.get(r.sessionId)).status === 'active' ? true : undefined), 10_000, 50);

  const seen: string[] = [];
  let before: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page: { status: number; body: any } = await t.api('GET', `/api/v1/sessions/${r.sessionId}/messages?limit=50${before ? `&before=${before}` : ''}`, { token: owner.key });
    assert.equal(page.status, 200);
    const d = page.body.data;
    const bytes = d.items.reduce((s: number, m: any) => s + Buffer.byteLength(m.content ?? ''), 0);
    assert.ok(d.items.length === 1 || bytes <= HISTORY_PAGE_MAX_BYTES, `a page of ${d.items.length} rows held ${bytes} bytes`);
    seen.unshift(...d.items.map((m: any) => m.id));
    if (!d.hasMore) break;
    before = d.firstId;
  }
  assert.equal(seen.length, 13, 'the prompt and the twelve large rows, each once');
  assert.equal(new Set(seen).size, 13);
  const one = await t.api('GET', `/api/v1/sessions/${r.sessionId}?includeMessages=true`, { token: owner.key });
  assert.equal(one.status, 200);
  assert.ok(one.text.length < HISTORY_PAGE_MAX_BYTES + 200_000, `the session with its messages answered ${one.text.length} bytes`);
  host.close();
});
