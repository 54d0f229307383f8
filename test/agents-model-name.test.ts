// An agent's modelName is the model its last written run end reported, also when run ends are
// written in batches at once (END_BATCHES_IN_FLIGHT): a node that skipped writing a model it
// thought recorded left the row on another batch's model.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import type { SessionView } from '../src/client/index.js';

const skip = process.env.DATABASE_URL ? undefined : 'DATABASE_URL is not set (row locks held from a second connection)';
let t: TestHub;
let host: FakeHost | undefined;
const clients: pg.Client[] = [];
before(async () => {
  if (!skip) t = await startTestHub();
});
after(async () => {
  for (const c of clients) await c.end().catch(() => {});
  host?.close();
  await t?.close();
});

async function connect(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: t.config.databaseUrl });
  await c.connect();
  clients.push(c);
  return c;
}

test('modelName follows the last run end written, when two batches of ends are written at once', { skip }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  host = await connectFakeHost(t, credential, { capacity: 3 });
  const starts: Array<{ runId: string; prompt: string }> = [];
  host.ws.on('message', (data: Buffer) => {
    const f = decodeHubFrame(data).frame as any;
    if (f?.t === 'run.start') starts.push({ runId: f.runId, prompt: f.prompt });
  });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'models', scope: 'private', hostId, engine: 'claude-code' });
  const [s1, s2] = [((await c.sessions.create({ agentId: agent.id })) as SessionView).id, ((await c.sessions.create({ agentId: agent.id })) as SessionView).id];
  const db = await connect();
  const modelName = async () => (await db.query(`select model_name from agents where id = $1`, [agent.id])).rows[0].model_name as string | null;
  const send = async (sid: string, prompt: string) => {
    await c.sessions.send(sid, { content: prompt });
    return (await eventually(async () => starts.find((s) => s.prompt === prompt), 5000, 10)).runId;
  };
  const end = (runId: string, model: string) => host!.send({ t: 'run.end', runId, ok: true, model, usage: { inputTokens: 1, outputTokens: 1 } });
  const ended = (runId: string) => eventually(async () => (await db.query(`select ended_at from session_tasks where id = $1`, [runId])).rows[0]?.ended_at, 5000, 10);
  const lockWaits = async () => Number((await db.query(`select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0].count);

  const r0 = await send(s1, 'zero');
  end(r0, 'model-a');
  await ended(r0);
  assert.equal(await modelName(), 'model-a');

  // Two runs end in two batches written at once; each batch is held on its session's row lock.
  const r1 = await send(s1, 'one');
  const r2 = await send(s2, 'two');
  const [hold1, hold2] = [await connect(), await connect()];
  for (const [h, sid] of [[hold1, s1], [hold2, s2]] as const) {
    await h.query('begin');
    await h.query(`select 1 from sessions where id = $1 for update`, [sid]);
  }
  end(r1, 'model-b');
  await eventually(async () => (await lockWaits()) >= 1, 5000, 10);
  end(r2, 'model-a'); // its batch starts while r1's is in flight
  await eventually(async () => (await lockWaits()) >= 2, 5000, 10);
  await hold1.query('commit'); // r1's end is written first (model-b), then r2's (model-a)
  await ended(r1);
  await hold2.query('commit');
  await ended(r2);
  assert.equal(await modelName(), 'model-a', 'the end written last');

  const r3 = await send(s1, 'three');
  end(r3, 'model-a');
  await ended(r3);
  assert.equal(await modelName(), 'model-a');
});
