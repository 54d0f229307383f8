// The embedded database's start (src/db/embedded.ts): PGlite's PostgreSQL zero-fills its whole
// shared-buffer region at every start, so their size is paid by every start and in the hub's RSS;
// and Node blocks on V8's background work whenever its event loop runs empty during the boot.
// Embedded PGlite only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/orm.js';
import { EMBEDDED_SHARED_BUFFERS, startEmbedded } from '../src/db/embedded.js';
import { createLogger } from '../src/log.js';

const skip = process.env.DATABASE_URL ? 'embedded PGlite only (the pass without DATABASE_URL runs it)' : false;

test(`the embedded database runs with ${EMBEDDED_SHARED_BUFFERS} of shared buffers (PGlite's 128 MB cost each start ≈ 0.4 s), on a new DATA_DIR and on its restart`, { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-embedded-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const start of ['first', 'restart']) {
    const db = await openDatabase({ dataDir: dir }, createLogger('silent'));
    try {
      const [{ shared_buffers }] = await db.orm.em.fork().getConnection().execute(`show shared_buffers`);
      assert.equal(shared_buffers, EMBEDDED_SHARED_BUFFERS, `${start} start`);
    } finally {
      await db.close();
    }
  }
});

test('the event loop never runs empty while the embedded database boots (Node would block on V8 background compiles)', { skip }, async () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const booting = startEmbedded(':memory:');
  try {
    await new Promise((r) => setImmediate(r));
    assert.equal(timers(), before + 1, 'a referenced timer holds the loop during the boot');
  } finally {
    await (await booting.ready).close();
  }
  assert.equal(timers(), before, 'and is gone once the database is up');
});
