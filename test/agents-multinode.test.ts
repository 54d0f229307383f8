// Two hubs in one process on one PostgreSQL database and one Redis: a write
// through node A must reach node B's in-process market catalog over the Bus.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { seedHost } from './helpers/seed.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hubs need one shared PostgreSQL)' : undefined;

let A: TestHub;
let B: TestHub;
const enc = encodeURIComponent;

before(async () => {
  if (skip) return;
  const shared = { redisUrl: (redis as { url: string }).url, redisPrefix: testPrefix() };
  A = await startTestHub(shared);
  B = await startTestHub({ ...shared, databaseUrl: A.config.databaseUrl });
});
after(async () => {
  await B?.close();
  await A?.close();
});

async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('market caches on another node follow writes made on this one', { skip }, async () => {
  const owner = await A.user('node-owner');
  const fan = await A.user();
  const host = await seedHost(A, owner.id);
  const c = await A.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'roaming', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' } });
  assert.equal(c.status, 201, c.text);
  const id = enc(c.body.data.id);
  assert.equal((await B.api('GET', `/api/v1/agents/${id}`)).status, 404);
  await A.api('POST', `/api/v1/admin/agents/${id}/approve`, { token: A.adminKey });
  await eventually(async () => (await B.api('GET', `/api/v1/agents/${id}`)).status === 200);

  // warm B's per-user cache, then favorite through A
  assert.equal((await B.api('GET', `/api/v1/agents/${id}`, { token: fan.key })).body.data.favorited, false);
  await A.api('POST', `/api/v1/agents/${id}/favorite`, { token: fan.key });
  await eventually(async () => {
    const d = (await B.api('GET', `/api/v1/agents/${id}`, { token: fan.key })).body.data;
    return d.favorited === true && d.favoriteCount === 1;
  });

  // a substantive change on A unlists it on B
  await A.api('PATCH', `/api/v1/agents/${id}`, { token: owner.key, body: { desc: 'changed on A' } });
  await eventually(async () => (await B.api('GET', `/api/v1/agents/${id}`)).status === 404);
  await eventually(async () => (await B.api('GET', '/api/v1/agents')).body.data.total === 0);
});
