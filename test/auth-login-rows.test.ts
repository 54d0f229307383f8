// What sign-in leaves in the database is bounded. Every login (an OIDC callback, a link's callback
// included) inserted an auth_sessions row that nothing deleted — not at sign-out, not at expiry — and
// every identity-link start a login_states row kept 10 minutes without bound per account: a script
// signing in, or looping link starts, wrote rows without end. Now an account's ended logins go at its
// next sign-in, at most LOGINS_PER_ACCOUNT live ones are kept (a new sign-in past it ends the oldest),
// and at most LINKS_PENDING_PER_ACCOUNT link attempts are in progress at once (409 past it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { LINKS_PENDING_PER_ACCOUNT, LOGINS_PER_ACCOUNT } from '../src/account-caps.js';

let idp: FakeOidc;
let t: TestHub;
before(async () => {
  idp = await startFakeOidc();
  t = await startTestHub({}, idp.env);
});
after(async () => {
  await t.close();
  await idp.close();
});

async function login(sub: string) {
  const anon = t.client().auth;
  const s = await anon.login();
  return anon.callback(idp.authorize(s.url, { sub }), s.state);
}

test('signed-out and expired logins are not kept: the next sign-in of the account removes them', async () => {
  const first = await login('rows-1');
  const userId = first.user.id;
  await t.client(first.accessToken).auth.logout();
  for (let i = 0; i < 20; i++) {
    const d = await login('rows-1');
    await t.client(d.accessToken).auth.logout();
  }
  const expired = await login('rows-1');
  await t.hub.ctx.em().execute(`update auth_sessions set expires_at = now() - interval '1 second' where id in (select id from auth_sessions where user_id = ? and revoked_at is null)`, [userId]);
  void expired;

  const live = await login('rows-1');
  await t.client(live.accessToken).me();
  const [{ n }] = await t.hub.ctx.em().execute(`select count(*)::int as n from auth_sessions where user_id = ?`, [userId]);
  assert.equal(n, 1, `the account keeps ${n} login rows, 21 signed out and 1 expired among them; only its live login should remain`);
});

test(`signing in and out in a loop leaves at most ${LOGINS_PER_ACCOUNT} login rows for the account`, async () => {
  const anon = t.client().auth;
  const who = { sub: 'looping-user', name: 'Looper' };
  let userId = '';
  const rounds = LOGINS_PER_ACCOUNT + 20;
  for (let i = 0; i < rounds; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, rounds - i) }, async () => {
      const s = await anon.login();
      const done = await anon.callback(idp.authorize(s.url, who), s.state);
      userId = done.user.id;
      await t.client(done.accessToken).auth.logout();
    }));
  }
  const [kept] = await t.hub.ctx.em().getConnection().execute(
    `select count(*)::int as n, count(*) filter (where revoked_at is null)::int as live from auth_sessions where user_id = ?`, [userId]);
  assert.ok(kept.n <= LOGINS_PER_ACCOUNT, `${rounds} sign-ins, each signed out: the account keeps ${kept.n} login rows (${kept.live} live) for good`);
});

test(`past ${LOGINS_PER_ACCOUNT} live logins a new sign-in ends the oldest: its refresh and access tokens are refused`, async () => {
  const anon = t.client().auth;
  const who = { sub: 'many-tabs', name: 'Tabs' };
  const logins = [];
  for (let i = 0; i < LOGINS_PER_ACCOUNT + 2; i++) {
    const s = await anon.login();
    logins.push(await anon.callback(idp.authorize(s.url, who), s.state));
  }
  const [kept] = await t.hub.ctx.em().getConnection().execute(
    `select count(*) filter (where revoked_at is null)::int as live from auth_sessions where user_id = ?`, [logins[0].user.id]);
  assert.equal(kept.live, LOGINS_PER_ACCOUNT);
  for (const old of logins.slice(0, 2)) {
    assert.equal((await t.api('GET', '/api/v1/me', { token: old.accessToken })).status, 401, 'the oldest login ended');
    assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: old.refreshToken } })).status, 401);
  }
  assert.equal((await t.api('GET', '/api/v1/me', { token: logins[2].accessToken })).status, 200, 'the newer ones go on');
});

test(`one account cannot keep more than ${LINKS_PENDING_PER_ACCOUNT} live identity-link attempts`, async () => {
  const u = await t.user('link-spammer');
  const statuses: number[] = [];
  const refused: any[] = [];
  for (let i = 0; i < 5; i++) {
    const batch = await Promise.all(Array.from({ length: 20 }, () => t.api('POST', '/api/v1/me/idem/oidc/link', { token: u.key })));
    for (const r of batch) {
      statuses.push(r.status);
      if (r.status !== 200) refused.push(r);
    }
  }
  // Whatever refuses must be the hub's envelope with a 409 (or 429), never a 500.
  for (const r of refused) {
    assert.ok(r.status === 409 || r.status === 429, `unexpected ${r.status}: ${r.text}`);
    assert.equal(typeof r.body?.code, 'string');
    assert.equal(r.body?.data, null);
  }
  const [live] = await t.hub.ctx.em().getConnection().execute(
    `select count(*)::int as n from login_states where user_id = ? and purpose = 'link' and expires_at > now()`, [u.id]);
  const made = statuses.filter((s) => s === 200).length;
  assert.ok(live.n <= LINKS_PENDING_PER_ACCOUNT, `${made} of 100 link attempts accepted; the account holds ${live.n} live attempts (assumed cap ${LINKS_PENDING_PER_ACCOUNT})`);
});
