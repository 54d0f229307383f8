// an account known full now has its sum read again before a message is refused,
// "at most once a second" (account-storage.ts FULL_RECHECK_MS). The re-read does not look at `reading`:
// every message that arrives while one re-read is in flight starts its own `select sum(stored_bytes)`.
// A full account (refused anyway) sending a burst of messages makes the hub run one query per message on
// the message path — and with the database slow, or the read failing (k.at is then not moved), every
// message queries. Concurrent messages of a full account should share one read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountStorage } from '../src/sessions/account-storage.js';

function fakeCtx(onQuery: () => void) {
  const conn = {
    async query(text: string) {
      if (/sum\(stored_bytes\)/.test(text)) onQuery();
      await new Promise((r) => setTimeout(r, 50)); // a database a little slow
      return { rows: [{ b: String(10_000) }] }; // over the bound below: full
    },
  };
  const client = { acquireConnection: async () => conn, releaseConnection: async () => undefined, pool: null };
  const orm = { em: { getConnection: () => ({ getKnex: () => ({ client }) }) } };
  const bus = { subscribe: () => () => undefined, publish: () => undefined };
  return { orm, bus, config: { accountStoredMaxBytes: 1000 } } as any;
}

test('a burst of messages from an account known full shares one read of its sum', async () => {
  let queries = 0;
  const storage = new AccountStorage(fakeCtx(() => queries++), 1000, 60_000);
  await assert.rejects(storage.assertRoom('usr_full'));
  assert.equal(queries, 1);
  await new Promise((r) => setTimeout(r, 1100)); // past FULL_RECHECK_MS

  queries = 0;
  const burst = Array.from({ length: 50 }, () => {
    try {
      return Promise.resolve(storage.onMessage('usr_full')).then(() => 'ok', () => 'refused');
    } catch {
      return Promise.resolve('refused');
    }
  });
  const out = await Promise.all(burst);
  storage.close();
  assert.ok(out.every((o) => o === 'refused'));
  assert.ok(queries <= 1, `50 concurrent messages of a full account ran ${queries} queries of its sum (one per message while a re-read was in flight)`);
});
