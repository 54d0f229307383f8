// Issue 14, faults: Redis restarted (killed, and started again empty) under
// load with two hub processes on one PostgreSQL database. The host's channel
// is on node A; messages go through node B at 50/s, and an SSE reader on B
// follows a long turn. After the restart the nodes resubscribe (a message
// sent through B still reaches the host on A), presence is rebuilt (B sees
// the host online), the reader resumes with Last-Event-ID without a gap or a
// duplicate, and no accepted message is lost.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase } from './helpers/hub.js';
import { startNode, call, type HubNode } from './helpers/nodes.js';
import { hasRedisServer, ownRedis, type OwnRedis } from './helpers/redis-server.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { openSse, type SseFrame } from './helpers/sse.js';
import { LoadClient } from '../bench/load-client.js';

const skip = !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hub processes share one PostgreSQL database)' : !hasRedisServer ? 'no redis-server binary to start a Redis this test may restart' : undefined;
if (skip) console.log(`# skipping the Redis restart fault: ${skip}`);

const RATE = 50;
let redis: OwnRedis | undefined;
const nodes: HubNode[] = [];
let host: FakeHost | undefined;
let dropDb: () => Promise<void> = async () => {};
const client = new LoadClient();

after(async () => {
  host?.ws.terminate();
  client.close();
  for (const n of nodes) n.kill('SIGKILL');
  await Promise.all(nodes.map((n) => n.exited));
  await redis?.kill();
  await dropDb();
});

test('Redis restarted under load with two nodes: resubscribe, presence, Last-Event-ID, no dispatch lost', { skip, timeout: 170_000 }, async () => {
  redis = await ownRedis(); // its own server on a free port: the shared Redis is never killed
  await redis.start();
  const db = await createTestDatabase();
  dropDb = db.drop;
  const adminKey = 'ahk_' + randomBytes(20).toString('hex');
  const env = {
    DATABASE_URL: db.url!, REDIS_URL: redis.url, REDIS_PREFIX: `t${randomBytes(4).toString('hex')}:`,
    ADMIN_API_KEY: adminKey, SECRET_KEY: 'redis-' + randomBytes(16).toString('hex'), RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    STARTER_TOKENS: '100000000', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  };
  const A = await startNode('redis-a', env, 120_000);
  nodes.push(A);
  const B = await startNode('redis-b', env, 120_000);
  nodes.push(B);
  try {
    const u = await call(A.url, 'POST', '/api/v1/admin/users', { token: adminKey, body: { name: 'redis' } });
    assert.equal(u.status, 201, u.text);
    const key: string = u.body.data.apiKey;
    const { hostId, credential } = await pairHost(A, key, 'redis-host');
    // The host: a prompt "long" streams 80 deltas over 12 s; any other is answered after 100 ms.
    const starts = new Map<string, number>();
    host = await connectFakeHost(A, credential, { capacity: 4 });
    const h = host;
    let seen = 0;
    h.ws.on('message', () => {
      for (; seen < h.frames.length; seen++) {
        const f = h.frames[seen];
        if (f.t !== 'run.start') continue;
        starts.set(f.runId, (starts.get(f.runId) ?? 0) + 1);
        const end = () => h.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
        if (f.prompt === 'long') {
          let i = 0;
          const timer = setInterval(() => {
            if (i < 80) h.send({ t: 'run.delta', runId: f.runId, text: `d${i++} ` });
            else (clearInterval(timer), end());
          }, 150);
        } else {
          setTimeout(() => {
            h.send({ t: 'run.message', runId: f.runId, role: 'assistant', blocks: [{ kind: 'text', content: `answer to ${f.prompt}` }] });
            end();
          }, 100);
        }
      }
    });
    const agent = await eventually(async () => {
      const r = await call(B.url, 'POST', '/api/v1/agents', { token: key, body: { name: 'redis', scope: 'private', hostId, engine: 'claude-code' } });
      return r.status === 201 ? r.body.data : undefined;
    });
    const sessions: string[] = [];
    for (let j = 0; j < 10; j++) {
      const s = await call(B.url, 'POST', '/api/v1/sessions', { token: key, body: { agentId: agent.id } });
      assert.equal(s.status, 201, s.text);
      sessions.push(s.body.data.id);
    }

    // The long turn, read through B.
    const longSession = sessions[0];
    const sent = await call(B.url, 'POST', `/api/v1/sessions/${longSession}/messages`, { token: key, body: { content: 'long' } });
    assert.equal(sent.status, 202, sent.text);
    const runId: string = sent.body.taskId;
    const auth = { authorization: `Bearer ${key}` };
    const reader1 = await openSse(`${B.url}/api/v1/sessions/${longSession}/events`, { headers: auth });
    await reader1.until((f) => f.event === 'message.delta', 15_000);

    // Load through B on the other sessions.
    const accepted = new Set<string>();
    const acceptedAfter = new Set<string>(); // sent once Redis is back
    let restarted = false;
    const statuses = new Map<number, number>();
    let stop = false;
    const inflight: Promise<void>[] = [];
    const load = (async () => {
      const start = Date.now();
      for (let n = 0; !stop; n++) {
        const due = start + (n / RATE) * 1000;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        const late = restarted;
        inflight.push(client.post(`${B.url}/api/v1/sessions/${sessions[1 + (n % 9)]}/messages`, key, { content: `m${n}` }).then((r) => {
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status === 202) (accepted.add(r.body.taskId), late && acceptedAfter.add(r.body.taskId));
        }, () => void statuses.set(0, (statuses.get(0) ?? 0) + 1)));
      }
    })();
    await new Promise((r) => setTimeout(r, 1500));
    await redis.kill();
    await new Promise((r) => setTimeout(r, 1500));
    await redis.start();
    restarted = true;

    // Presence rebuilt: B sees the host connected (online, or busy: the load keeps its 4 slots full, and a
    // run's end starts the next waiting run in the same call, so it need never read online); resubscribed:
    // a message through B reaches the host on A.
    // Each node writes its hosts' presence again as soon as its bus reconnects (presence-upkeep.ts, rebuild).
    await eventually(async () => ['online', 'busy'].includes((await call(B.url, 'GET', `/api/v1/hosts/${hostId}`, { token: key })).body?.data?.status), 30_000, 200).catch(async (e) => {
      const onA = (await call(A.url, 'GET', `/api/v1/hosts/${hostId}`, { token: key })).body?.data?.status;
      const onB = (await call(B.url, 'GET', `/api/v1/hosts/${hostId}`, { token: key })).body?.data?.status;
      throw new Error(`${e.message}: presence not rebuilt after the Redis restart (A: ${onA}, B: ${onB})`);
    });
    await eventually(async () => [...acceptedAfter].some((id) => starts.has(id)), 30_000, 200).catch((e) => {
      throw new Error(`${e.message}: no message accepted after the restart reached the host (accepted after ${acceptedAfter.size}, answers ${JSON.stringify([...statuses])}, runs started ${starts.size})`);
    });
    // The reader, cut off from the turn's events while Redis was down, resumes with the last id it saw:
    // its node asks the host's node over the resubscribed bus for what it missed.
    const last = [...reader1.frames].reverse().find((f) => f.id)!;
    reader1.close();
    const reader2 = await openSse(`${B.url}/api/v1/sessions/${longSession}/events`, { headers: { ...auth, 'last-event-id': last.id! } });
    const done = await reader2.until((f) => f.event === 'run.completed' || f.event === 'run.error', 60_000);
    assert.equal(done.event, 'run.completed', JSON.stringify(done.data));
    reader2.close();
    // The snapshot that opens a stream repeats the Last-Event-ID it was given: the run's own events only.
    assert.equal(reader2.frames[0]?.event, 'snapshot');
    assert.equal(reader2.frames[0].data.resumed, true, 'the missed events could be replayed');
    const ns = (fs: SseFrame[]) => fs.filter((f) => f.event !== 'snapshot' && f.id?.startsWith(`${runId}:`)).map((f) => Number(f.id!.slice(runId.length + 1)));
    const upTo = ns(reader1.frames).filter((n) => n <= Number(last.id!.slice(runId.length + 1)));
    const resumed = ns(reader2.frames);
    const all = [...upTo, ...resumed].filter((n) => n < 1e9).sort((a, b) => a - b); // the final event has its own high number
    const trail = `first reader ${JSON.stringify(ns(reader1.frames))}, resumed after ${last.id} with ${JSON.stringify(resumed)}`;
    assert.deepEqual(all, [...new Set(all)], `no event twice across the resume: ${trail}`);
    assert.deepEqual(all, Array.from({ length: all.length }, (_, i) => all[0] + i), `no gap across the resume: ${trail}`);
    const deltas = [...reader1.frames.filter((f) => Number(f.id?.slice(runId.length + 1)) <= Number(last.id!.slice(runId.length + 1))), ...reader2.frames].filter((f) => f.event === 'message.delta');
    assert.equal(deltas.length, 80, 'every delta of the long turn, once');

    await new Promise((r) => setTimeout(r, 1500)); // some load after the restart
    stop = true;
    await load;
    await Promise.all(inflight);
    console.log(`# answers through B (status: count; 0 = no answer): ${JSON.stringify([...statuses])}`);
    assert.deepEqual([...statuses.keys()].filter((s) => s === 0 || s >= 500 && s !== 503), [], 'no 500 and no dropped request');

    // No dispatch lost: everything accepted drains and is answered (or failed), started once.
    const stuck = async () => {
      const r = await call(B.url, 'GET', '/api/v1/sessions?pageSize=50', { token: key });
      return r.status === 200 ? r.body.data.items.filter((s: any) => s.status !== 'active' || s.pendingRuns !== 0).map((s: any) => `${s.id} ${s.status} ${s.pendingRuns}`) : ['?'];
    };
    // A drain that met Redis down is retried with backoff, and presence written again after Redis lost
    // it drains the host (scheduler.ts): a queue is no longer left with nothing to wake it.
    // A run.start forwarded from B while A had not resubscribed is sent again by A, which holds the
    // host's channel (scheduler.ts, reconcile): no run stays `processing`.
    await eventually(async () => (await stuck()).length === 0, 40_000, 250).catch(async (e) => {
      throw new Error(`${e.message}: sessions still queued after the Redis restart: ${JSON.stringify(await stuck())}`);
    });
    const prompts = new Set<string>();
    for (const sid of sessions) {
      for (let before = ''; ;) {
        const r = await call(B.url, 'GET', `/api/v1/sessions/${sid}/messages?limit=50${before && `&before=${before}`}`, { token: key });
        assert.equal(r.status, 200, r.text);
        for (const m of r.body.data.items) if (m.role === 'user') prompts.add(m.runId);
        if (!r.body.data.hasMore) break;
        before = r.body.data.firstId;
      }
    }
    assert.deepEqual([...accepted].filter((id) => !prompts.has(id)), [], 'accepted messages lost');
    assert.deepEqual([...accepted].filter((id) => (starts.get(id) ?? 0) > 1), [], 'accepted messages started twice on the host');
    // One never started was answered visibly: its dispatch met Redis down (presence unreadable) and the run failed.
    const unstarted = [...accepted].filter((id) => !starts.has(id));
    const pgc = new pg.Client({ connectionString: db.url! });
    await pgc.connect();
    try {
      const r = await pgc.query<{ id: string; status: string; error_code: string | null }>(
        `select id, status, error_code from session_tasks where id = any($1::text[])`, [unstarted]);
      const unanswered = r.rows.filter((x) => x.status !== 'failed' || !x.error_code).map((x) => `${x.id} ${x.status} ${x.error_code}`);
      assert.deepEqual(unanswered, [], 'an accepted message never started on the host ended failed with a reason');
      assert.equal(r.rows.length, unstarted.length);
    } finally {
      await pgc.end();
    }
    console.log(`# accepted ${accepted.size}: started once ${accepted.size - unstarted.length}, failed at dispatch while Redis was down ${unstarted.length}`);
  } catch (e) {
    console.error(nodes.map((n) => `--- ${n.name} ---\n${n.output()}`).join('\n'));
    throw e;
  }
});
