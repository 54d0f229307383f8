// Makes the embedded database's template (db/template.ts): a fresh PGlite
// database on disk, every migration, kept as a directory and dumped as a
// gzipped tarball. Run by `npm run build` (and so by `npm ci`'s prepare);
// `--if-missing` leaves an existing pair alone.
import { chmodSync, existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chmodTree } from '../data-dir.js';
import { createLogger } from '../log.js';
import { openDatabase } from './orm.js';
import { startEmbedded } from './embedded.js';
import { holdsDatabase, NO_TEMPLATE, templateDir, templateFile } from './template.js';

const dir = templateDir();
const file = templateFile();
if (process.argv.includes('--if-missing') && holdsDatabase(dir) && existsSync(file)) process.exit(0);
const t0 = performance.now();
const log = createLogger('warn');
// From initdb and every migration, never from an earlier template. startEmbedded keeps a DATA_DIR's
// database in its `pg` folder: the work folder is this build's own.
const work = `${dir}.build-${process.pid}`;
rmSync(work, { recursive: true, force: true });
try {
  const db = await openDatabase({ dataDir: work }, log, startEmbedded(work, log, NO_TEMPLATE));
  const tarball = Buffer.from(await (await db.dumpEmbedded!()).arrayBuffer());
  await db.close();
  // PGlite leaves its lock file behind; a copy of the template is a database nobody has open.
  rmSync(join(work, 'pg', 'postmaster.pid'), { force: true });
  // Each whole or not at all: a start racing this build never reads half a file or half a directory
  // (it may find neither for a moment, and then initialises its database itself).
  writeFileSync(`${file}.tmp`, tarball);
  readableByAll(`${file}.tmp`);
  renameSync(`${file}.tmp`, file);
  readableByAll(join(work, 'pg'));
  rmSync(dir, { recursive: true, force: true });
  renameSync(join(work, 'pg'), dir);
  process.stdout.write(`embedded database template: ${dir} and ${file} (${(tarball.length / 2 ** 20).toFixed(1)} MiB, ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * The template holds no secret (no account, no key: test/db-template.test.ts) and the hub may run as
 * another user than the one who installed it; startEmbedded made it the owner's alone, as it makes
 * every database. A copy of it is made the owner's alone again (db/embedded.ts).
 */
function readableByAll(path: string): void {
  const modeOf = (_mode: number, isDirectory: boolean) => (isDirectory ? 0o755 : 0o644);
  const isDirectory = statSync(path).isDirectory();
  chmodSync(path, modeOf(0, isDirectory));
  if (isDirectory) chmodTree(path, modeOf);
}
