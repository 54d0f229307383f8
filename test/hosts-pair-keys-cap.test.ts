// An account held any number of pair keys: POST /hosts/pair-key checked the hosts quota (hosts already
// paired) and inserted a row each call, purged only a day after it expired and only when the same
// account made another key — about 30,000 rows a minute for one account at the general rate limits,
// and, made in advance, keys to pair past the hosts quota at once. An account now holds at most
// PAIR_KEYS_PER_ACCOUNT live keys (409 past it), and its spent and expired keys go at its next call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { PAIR_KEYS_PER_ACCOUNT } from '../src/account-caps.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const rowsOf = async (userId: string) => (await t.hub.ctx.em().getConnection().execute(`select count(*)::int as n from pair_keys where user_id = ?`, [userId]))[0].n as number;

test('an account holds at most PAIR_KEYS_PER_ACCOUNT live pair keys; spent and expired ones go at its next call', async () => {
  const u = await t.user();
  for (let i = 0; i < PAIR_KEYS_PER_ACCOUNT; i++) assert.equal((await t.api('POST', '/api/v1/hosts/pair-key', { token: u.key })).status, 201);
  const over = await t.api('POST', '/api/v1/hosts/pair-key', { token: u.key });
  assert.equal(over.status, 409, over.text);
  assert.equal(await rowsOf(u.id), PAIR_KEYS_PER_ACCOUNT);
  // Keys spent or expired free their places, and their rows go.
  await t.hub.ctx.em().getConnection().execute(`update pair_keys set expires_at = now() - interval '1 minute' where user_id = ?`, [u.id]);
  assert.equal((await t.api('POST', '/api/v1/hosts/pair-key', { token: u.key })).status, 201);
  assert.equal(await rowsOf(u.id), 1, 'the expired keys are gone');
});
