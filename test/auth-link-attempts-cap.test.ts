// `POST /api/v1/me/idem/{provider}/link` inserts a login_states row (hash, PKCE
// verifier, nonce) per call and keeps it for its 10-minute life; nothing bounds how many one account
// holds. Under the general rate limit (600 a minute per API key, and an account may hold 50 keys)
// one account keeps hundreds of thousands of live attempts, and every start sweeps the whole table
// (`delete from login_states where expires_at < now()`, no index on expires_at). Pair keys had the
// same shape and are capped (PAIR_KEYS_PER_ACCOUNT = 20, src/account-caps.ts); chat-platform binding
// attempts keep one pending per account. Assumed here: an account holds at most 20 live link
// attempts — past that a new one is refused 409 with the hub's envelope, or replaces older ones.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';

const ASSUMED_CAP = 20;

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

test(`one account cannot keep more than ${ASSUMED_CAP} live identity-link attempts`, async () => {
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
  assert.ok(live.n <= ASSUMED_CAP, `${made} of 100 link attempts accepted; the account holds ${live.n} live attempts (assumed cap ${ASSUMED_CAP})`);
});
