// A host's running count in presence (its status busy/online, and "idle" for owed model settings)
// is recounted from the database after its runs end. The ends of a busy node come every few
// milliseconds; the recount is one query for every host whose runs ended within a window
// of at least 100 ms (scheduler.ts RECOUNT_DELAY_MS), not one per end or per short burst: at 500
// messages/s a window of 20 ms cost 0.08 queries per message (bench/RESULTS.md, twenty-fourth session).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapHubQueries } from './helpers/hub.js';
import { hubWithHosts } from './helpers/hosts-hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import { RECOUNT_DELAY_MS } from '../src/sessions/scheduler.js';
import type { AcceptedRun } from '../src/client/index.js';
import type { FrameOf, HubToHost } from '../host-protocol/frames.js';

const RUNS = 12;
const END_EVERY_MS = 15;
/** The window the recount may lag by (presence is advisory: capacity itself is counted under the host's lock). */
const WINDOW_MS = 100;
const s = hubWithHosts();

/** Counts the running-count statements (every statement, through knex or not, is a node-postgres Client's query). */
function countRecounts(): { n: number; restore(): void } {
  const out = { n: 0, restore: () => {} };
  out.restore = wrapHubQueries(s.t.hub, (q, send) => {
    if (/select host_id, count\(\*\) as c from session_tasks/.test(q.text)) out.n++;
    return send();
  });
  return out;
}

test('run ends spread over time are recounted into presence once per window, and the count ends right', { timeout: 60_000 }, async () => {
  const { t, hosts } = s;
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key, 'recount');
  const host = await connectFakeHost(t, credential, { capacity: RUNS });
  hosts.push(host);
  const agent = await agentWhenReady(c, { name: 'recount', scope: 'private', hostId, engine: 'claude-code' }, 10_000);
  for (let i = 0; i < RUNS; i++) await c.sessions.create({ agentId: agent.id, content: `hello ${i}` }) as AcceptedRun;
  const starts: Array<FrameOf<HubToHost, 'run.start'>> = [];
  await eventually(async () => {
    starts.splice(0, starts.length, ...host.frames.filter((f): f is FrameOf<HubToHost, 'run.start'> => f.t === 'run.start'));
    return starts.length === RUNS;
  });
  await eventually(async () => ((await c.hosts.get(hostId)).running === RUNS ? true : undefined), 5_000, 20);

  const recounts = countRecounts();
  try {
    const first = performance.now();
    for (const f of starts) {
      host.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
      await new Promise((r) => setTimeout(r, END_EVERY_MS));
    }
    const span = performance.now() - first;
    const hv = await eventually(async () => {
      const v = await c.hosts.get(hostId);
      return v.running === 0 ? v : undefined;
    }, 5_000, 20);
    assert.equal(hv.status, 'online');
    await new Promise((r) => setTimeout(r, 2 * RECOUNT_DELAY_MS)); // any recount still due
    // One window opens at the first end after the previous one closed: at most one per window of the span, and the last.
    const most = Math.ceil(span / WINDOW_MS) + 1;
    assert.ok(recounts.n >= 1 && recounts.n <= most, `${recounts.n} recounts for ${RUNS} ends over ${Math.round(span)} ms (at most ${most})`);
  } finally {
    recounts.restore();
  }
});
