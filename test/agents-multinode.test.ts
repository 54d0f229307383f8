// Two hubs in one process on one PostgreSQL database and one Redis: a write
// through node A must reach node B's in-process market catalog over the Bus.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { seedHost } from './helpers/seed.js';
import { apiError } from './helpers/api-error.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hubs need one shared PostgreSQL)' : undefined;

let A: TestHub;
let B: TestHub;

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

/** Whether the call fails with a 404 (any other failure is thrown). */
const notFound = (p: Promise<unknown>) => p.then(() => false, (e: unknown) => apiError(404)(e));

test('market caches on another node follow writes made on this one', { skip }, async () => {
  const owner = await A.user('node-owner');
  const fan = await A.user();
  const host = await seedHost(A, owner.id);
  const onA = A.client(owner.key);
  const fanA = A.client(fan.key);
  const fanB = B.client(fan.key);
  const anonB = B.client();
  const { id } = await onA.agents.create({ name: 'roaming', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' });
  await assert.rejects(anonB.market.get(id), apiError(404));
  await A.admin.admin.approveAgent(id);
  await eventually(async () => (await anonB.market.get(id).catch(() => undefined)) !== undefined);

  // warm B's per-user cache, then favorite through A
  assert.equal((await fanB.market.get(id)).favorited, false);
  await fanA.market.favorite(id, true);
  await eventually(async () => {
    const d = await fanB.market.get(id);
    return d.favorited === true && d.favoriteCount === 1;
  });

  // a substantive change on A unlists it on B
  await onA.agents.update(id, { desc: 'changed on A' });
  await eventually(() => notFound(anonB.market.get(id)));
  await eventually(async () => (await anonB.market.list()).total === 0);
});
