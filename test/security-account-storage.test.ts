// SESSION_STORED_MAX_BYTES (256 MiB) bounds what one session stores, and sessionsPerDay
// (20 on the free plan) how many sessions an account opens a day — but nothing bounds what an account
// stores in all. An account running its own agent on its own host (the host reports no usage, so every
// run is free: docs/security.md) fills 20 sessions a day to 256 MiB each: 5 GiB a day on the free
// plan, 1.25 TiB a day on a plan of 5,000 sessions a day, kept for good and growing day after day.
// Here the account already holds 20 full sessions (one free-plan day's worth, written straight to the
// table: streaming 5 GiB would take minutes) and opens one more with a first message.
// Assumed: an account stores at most 16 × SESSION_STORED_MAX_BYTES (4 GiB) of messages and output in
// all; past it a new message is refused 409 with the hub's envelope, as a full session's is.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, agentWhenReady } from './helpers/host.js';

const SESSION_MAX = 256 * 1024 * 1024;
const ASSUMED_ACCOUNT_MAX = 16 * SESSION_MAX;

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test(`an account holding 20 full sessions (${(20 * SESSION_MAX) / 2 ** 30} GiB) cannot store more`, async () => {
  const owner = await t.user('hoarder');
  const c = t.client(owner.key);
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 4 });
  const a = await agentWhenReady(c, { name: 'hoard', hostId, engine: 'claude-code', workDir: '' });

  await t.hub.ctx.em().getConnection().execute(
    `insert into sessions (id, user_id, agent_id, agent_name, title, mode, effort, last_active_at, stored_bytes)
     select 'ses_full_' || g, ?, ?, 'hoard', 'full ' || g, 'default', 'default', now(), ? from generate_series(1, 20) g`,
    [owner.id, a.id, SESSION_MAX],
  );
  const [held] = await t.hub.ctx.em().getConnection().execute(`select sum(stored_bytes)::bigint as b from sessions where user_id = ?`, [owner.id]);
  assert.ok(Number(held.b) > ASSUMED_ACCOUNT_MAX);

  const r = await t.api('POST', '/api/v1/sessions', { token: owner.key, body: { agentId: a.id, content: 'x'.repeat(100_000) } });
  host.close();
  assert.equal(r.status, 409, `the account holds ${held.b} bytes in its sessions (assumed budget ${ASSUMED_ACCOUNT_MAX}); a new 100,000-character message answered ${r.status}: ${r.text}`);
  assert.equal(r.body?.data, null);
});

test('a session already open takes no more messages once its account is found full, and takes them again when sessions are deleted', async () => {
  const owner = await t.user('hoarder-2');
  const c = t.client(owner.key);
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 4 });
  try {
    const a = await agentWhenReady(c, { name: 'hoard2', hostId, engine: 'claude-code', workDir: '' });
    const open = await c.sessions.create({ agentId: a.id });
    assert.ok('id' in open);
    await t.hub.ctx.em().getConnection().execute(
      `insert into sessions (id, user_id, agent_id, agent_name, title, mode, effort, last_active_at, stored_bytes)
       select 'ses_full2_' || g, ?, ?, 'hoard2', 'full ' || g, 'default', 'default', now(), ? from generate_series(1, 20) g`,
      [owner.id, a.id, SESSION_MAX],
    );
    // Opening another reads the account's sum: refused, and the node now knows the account is full.
    assert.equal((await t.api('POST', '/api/v1/sessions', { token: owner.key, body: { agentId: a.id } })).status, 409);
    const send = () => t.api('POST', `/api/v1/sessions/${encodeURIComponent(open.id)}/messages`, { token: owner.key, body: { content: 'more' } });
    const refused = await send();
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.body.message, /delete sessions/);
    assert.equal((await c.sessions.messages(open.id)).items.length, 0, 'nothing stored');
    // Deleting sessions makes room: 15 full ones are 3.75 GiB, under the 4 GiB default.
    for (let g = 1; g <= 5; g++) await c.sessions.remove(`ses_full2_${g}`);
    const again = await send();
    assert.equal(again.status, 202, again.text);
  } finally {
    host.close();
  }
});
