// An account holds one identity per provider, and an identity belongs to one account: the login flow's
// link and the chat platform's confirm checked both with a read before their insert, so racing calls
// passed the read together. Links of one account finished at once left it with several identities of
// the provider (no unique index on (user_id, provider)); two accounts linking one identity, or
// confirming one chat user, at once answered the loser 500 (the (provider, subject) unique index).
// Each race now leaves one identity and answers the losers 409.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { ApiError } from '../src/client/index.js';
import { IDENTITY_PER_PROVIDER_SQL } from '../src/accounts/migration-identity-per-provider.js';

const BOT_SECRET = 'bot-secret-races';
let idp: FakeOidc;
let t: TestHub;
before(async () => {
  idp = await startFakeOidc();
  t = await startTestHub({}, { ...idp.env, CHATAPP_WEBHOOK_SECRET: BOT_SECRET });
});
after(async () => {
  await t.close();
  await idp.close();
});

const statusOf = (p: Promise<unknown>) => p.then(() => 200, (e: unknown) => (e instanceof ApiError ? e.status : Promise.reject(e)));
const identities = async (userId: string, provider: string) =>
  Number((await t.hub.ctx.em().getConnection().execute(`select count(*)::int as n from identities where user_id = ? and provider = ?`, [userId, provider]))[0].n);
const holders = async (provider: string, subject: string) =>
  Number((await t.hub.ctx.em().getConnection().execute(`select count(*)::int as n from identities where provider = ? and subject = ?`, [provider, subject]))[0].n);

test('links of one account finished at once: one identity of the provider, the others 409', async () => {
  const u = await t.user('many-links');
  const c = t.client(u.key);
  const N = 6;
  const flows = await Promise.all(Array.from({ length: N }, () => c.auth.linkIdentity('oidc')));
  const codes = flows.map((l, i) => idp.authorize(l.url, { sub: `many-links-idp-${i}` }));
  const got = await Promise.all(flows.map((l, i) => statusOf(c.auth.callback(codes[i], l.state))));
  assert.deepEqual(got.filter((s) => s !== 200 && s !== 409), [], 'no other answer');
  assert.equal(got.filter((s) => s === 200).length, 1, 'one link won');
  assert.equal(await identities(u.id, 'oidc'), 1);
});

test('two accounts linking one provider identity at once: one wins, the other 409', async () => {
  for (let round = 0; round < 4; round++) {
    const users = await Promise.all([t.user(), t.user()]);
    const sub = `contested-${round}-${users[0].id}`;
    const flows = await Promise.all(users.map((u) => t.client(u.key).auth.linkIdentity('oidc')));
    const codes = flows.map((l) => idp.authorize(l.url, { sub }));
    const got = await Promise.all(users.map((u, i) => statusOf(t.client(u.key).auth.callback(codes[i], flows[i].state))));
    assert.deepEqual([...got].sort(), [200, 409], `round ${round}`);
    assert.equal(await holders('oidc', sub), 1);
  }
});

const confirm = (body: unknown) => t.api('POST', '/api/v1/chatapp/confirm', { body, headers: { 'x-chatapp-secret': BOT_SECRET } });

test('one chat user confirmed for two accounts at once: one bound, the other 409, never 500', async () => {
  for (let round = 0; round < 4; round++) {
    const users = await Promise.all([t.user(), t.user()]);
    const attempts = await Promise.all(users.map((u) => t.client(u.key).bindings.chatappAttempt()));
    const chatUserId = `tg-race-${round}-${users[0].id}`;
    const got = await Promise.all(attempts.map((a) => confirm({ code: a.code, chatUserId })));
    assert.deepEqual(got.map((r) => r.status).sort(), [200, 409], `round ${round}: ${JSON.stringify(got.map((r) => r.body))}`);
    assert.equal(await holders('chatapp', chatUserId), 1);
  }
});

test("the migration keeps an account's oldest identity of a provider when races left several", async () => {
  const u = await t.user('left-duplicates');
  const conn = t.hub.ctx.em().getConnection();
  await conn.execute(`drop index identities_user_provider`);
  try {
    for (const [i, at] of ['2026-01-01', '2025-06-01', '2026-03-01'].entries()) {
      await conn.execute(`insert into identities (id, user_id, provider, subject, created_at) values (?, ?, 'oidc', ?, ?)`, [`idn_dup${i}${u.id}`, u.id, `dup-${i}-${u.id}`, at]);
    }
  } finally {
    for (const sql of IDENTITY_PER_PROVIDER_SQL) await conn.execute(sql);
  }
  const left = await conn.execute(`select subject from identities where user_id = ?`, [u.id]);
  assert.deepEqual(left.map((r: any) => r.subject), [`dup-1-${u.id}`]);
});
