// Message accepts arriving together are written in hub_accept calls bounded
// in bytes as well as in count: 64 messages of 100,000 characters each were
// one statement of up to 38 MB of JSON (6–19 MB in common text). Shown with
// a trigger that records the transaction of each stored message, and a first
// message whose insert sleeps so that the rest arrive while its batch is in
// flight (they would all go in the next batch).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, agentWhenReady, type FakeHost } from './helpers/host.js';
import { ACCEPT_BATCH_MAX_BYTES } from '../src/limits.js';
import type { SessionView } from '../src/client/index.js';

const CONTENT_MAX = 100_000;
let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  host?.close();
  await t?.close();
});

test('messages arriving together are accepted in calls bounded in bytes, not one statement of every message', { timeout: 60_000 }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'big-messages');
  host = await connectFakeHost(t, credential, { capacity: 1 });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'big-messages', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const n = 8;
  const sessions: string[] = [];
  for (let i = 0; i <= n; i++) sessions.push(((await c.sessions.create({ agentId: agent.id })) as SessionView).id);
  const db = t.hub.ctx.em().getConnection();
  await db.execute(`create table accept_tx (tx bigint not null, chars int not null)`);
  await db.execute(`create function accept_tx_record() returns trigger language plpgsql as $$ begin
    if new.content = 'hold' then perform pg_sleep(0.6); end if;
    insert into accept_tx values (txid_current(), length(new.content)); return new; end $$`);
  await db.execute(`create trigger accept_tx_record before insert on session_messages for each row execute function accept_tx_record()`);
  try {
    const held = c.sessions.send(sessions[0], { content: 'hold' });
    await new Promise((r) => setTimeout(r, 200)); // its batch is in flight, sleeping in the insert
    const big = Array.from({ length: n }, (_, i) => c.sessions.send(sessions[i + 1], { content: String(i).repeat(CONTENT_MAX) }));
    await Promise.all([held, ...big]);
    const perTx = await db.execute(`select tx, count(*)::int as messages, sum(chars)::int as chars from accept_tx where chars = ? group by tx`, [CONTENT_MAX]);
    assert.equal(perTx.reduce((a: number, r: any) => a + r.messages, 0), n, 'every message stored once');
    assert.ok(n * CONTENT_MAX * 6 > ACCEPT_BATCH_MAX_BYTES, 'the messages together are over the bound (as JSON, at most 6 bytes a character)');
    assert.ok(perTx.length >= 2, `the ${n} messages were written by ${perTx.length} call(s) of hub_accept`);
    for (const r of perTx) assert.ok(r.chars * 6 <= ACCEPT_BATCH_MAX_BYTES, `one call carried ${r.chars} characters`);
  } finally {
    await db.execute(`drop trigger accept_tx_record on session_messages`);
  }
});
