// Refresh-token reuse (OAuth 2.0 Security BCP, RFC 9700 §4.14.2). A refresh token rotates on every
// use; one already rotated away presented again proves two parties hold the login (its user and
// whoever copied the token from the tab's sessionStorage), so the whole login ends — else the thief,
// who refreshed first, kept a login sliding forward for ever. What counts as "rotated away" is the
// rotation a token names under the hub's signature (`ahr_<sid>.<n>.<nonce>.<mac>`):
// - not the sid alone: the sid is readable in every access token, and a made-up token naming it
//   ended the login, unauthenticated (a stranger's way to sign anyone out);
// - not a bounded list of spent hashes: a thief refreshing 17 times made the victim's copy forgotten;
// - and the token rotated last is forgiven for a moment (one client's own racing refreshes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { rowLock } from './helpers/row-lock.js';

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

test('a replayed (rotated) refresh token ends the login: the current refresh token and access tokens stop working', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'reuse-victim', name: 'Victim' }), s.state);

  // The thief copied d.refreshToken and refreshes first.
  const thief = await anon.refresh(d.refreshToken);
  // Later (past the moment a client's own racing refreshes are forgiven), the victim's tab refreshes with the same, rotated, token.
  await t.hub.ctx.em().execute(`update auth_sessions set rotated_at = now() - interval '1 minute' where user_id = ?`, [d.user.id]);
  const replay = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(replay.status, 401);

  // The reuse proves the token leaked: the login must be over for everyone.
  const again = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: thief.refreshToken } });
  assert.equal(again.status, 401, `after a rotated refresh token was replayed, the thief's current one still refreshed (${again.status})`);
  const me = await t.api('GET', '/api/v1/me', { token: thief.accessToken });
  assert.equal(me.status, 401, `after a rotated refresh token was replayed, the thief's access token still worked (${me.status})`);
});

test("two refreshes of one client racing with the same token: the loser gets 401, the login goes on", async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'racing-tab', name: 'Tab' }), s.state);
  const won = await anon.refresh(d.refreshToken);
  // The same token again a moment later (a second request of the same tab): refused, nothing ended.
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } })).status, 401);
  assert.equal((await t.api('GET', '/api/v1/me', { token: won.accessToken })).status, 200);
  await anon.refresh(won.refreshToken);
});

test('a refresh token rotated long ago, presented again, ends the login though newer ones were rotated since', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'deep-reuse', name: 'Deep' }), s.state);
  let cur = await anon.refresh(d.refreshToken);
  for (let i = 0; i < 3; i++) cur = await anon.refresh(cur.refreshToken);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } })).status, 401);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: cur.refreshToken } })).status, 401, 'the login ended');
});

test('a refresh token never issued, naming a login by its sid, does not end that login', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'forged-sid-victim', name: 'Victim' }), s.state);
  // The login has rotated once, long enough ago that a replay of rotation 0 would end it.
  const cur = await anon.refresh(d.refreshToken);
  await t.hub.ctx.em().execute(`update auth_sessions set rotated_at = now() - interval '1 minute' where user_id = ?`, [d.user.id]);

  // The sid, read from the access token without any key.
  const sid = JSON.parse(Buffer.from(cur.accessToken.split('.')[1], 'base64url').toString('utf8')).sid as string;
  assert.match(sid, /^lgn_/);

  // An unauthenticated stranger presents made-up tokens under that sid: a bare secret, and one in the
  // signed form naming the rotation already spent (only the hub's signature tells it from a real one).
  for (const forged of [`ahr_${sid}.${'A'.repeat(48)}`, `ahr_${sid}.0.${'N'.repeat(40)}.${'M'.repeat(32)}`]) {
    const r = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: forged } });
    assert.equal(r.status, 401, forged);
  }

  // The victim's login must go on: its access token and its real refresh token still work.
  const me = await t.api('GET', '/api/v1/me', { token: cur.accessToken });
  assert.equal(me.status, 200, `a forged refresh token naming the login's sid ended it: the access token is refused (${me.status})`);
  const again = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: cur.refreshToken } });
  assert.equal(again.status, 200, `a forged refresh token naming the login's sid ended it: the real refresh token is refused (${again.status})`);
});

test('a login past its expiry cannot be refreshed', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'expired-login', name: 'Old' }), s.state);
  await t.hub.ctx.em().execute(`update auth_sessions set expires_at = now() - interval '1 second' where user_id = ?`, [d.user.id]);
  const r = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(r.status, 401);
  assert.equal(r.body.code, '4011', 'TOKEN_EXPIRED: the client signs in again');
});

// PGlite serves one connection at a time: the row lock that lines the two refreshes up needs PostgreSQL.
test('two refreshes racing past their reads: exactly one rotates the token', { skip: !process.env.DATABASE_URL && 'needs PostgreSQL (DATABASE_URL)' }, async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'racing-writes', name: 'Racer' }), s.state);
  // Hold the login's row so that both refreshes have read it before either writes.
  const lock = await rowLock(t.config.databaseUrl!);
  try {
    await lock.hold(`select 1 from auth_sessions where user_id = $1 for update`, [d.user.id]);
    const both = Promise.allSettled([anon.refresh(d.refreshToken), anon.refresh(d.refreshToken)]);
    await lock.until('update auth_sessions set refresh_hash%', 2);
    await lock.release();
    const won = (await both).filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1, 'two refreshes of one token both rotated it: two live refresh tokens for one login');
  } finally {
    await lock.close();
  }
});

test('a thief who refreshes 17 times in a row cannot make the victim\'s rotated token forgotten', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'flush-victim', name: 'Victim' }), s.state);

  // The thief copied d.refreshToken and rotates it 17 times at once.
  let thief = await anon.refresh(d.refreshToken);
  for (let i = 0; i < 16; i++) thief = await anon.refresh(thief.refreshToken);
  await t.hub.ctx.em().execute(`update auth_sessions set rotated_at = now() - interval '1 minute' where user_id = ?`, [d.user.id]);

  // The victim's tab comes back with its (rotated) token.
  const replay = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(replay.status, 401);

  const again = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: thief.refreshToken } });
  assert.equal(again.status, 401, `the victim's rotated token was replayed, yet the thief's current one still refreshed (${again.status}): 17 rotations flushed it from spent_hashes`);
  const me = await t.api('GET', '/api/v1/me', { token: thief.accessToken });
  assert.equal(me.status, 401, `the thief's access token still works (${me.status})`);
});
