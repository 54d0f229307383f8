// The zero-setup default: PGlite (PostgreSQL compiled to WASM) in this
// process, exposed on a loopback port so MikroORM's ordinary PostgreSQL
// driver talks to it. One SQL dialect everywhere. PGlite serves one
// connection at a time, hence the pool of one (see db/orm.ts).
// PGlite is imported here on demand: a hub on PostgreSQL never loads it.
import { cpSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { ensurePrivateDir, restrictUmask, tightenTree } from '../data-dir.js';
import type { Logger } from '../log.js';
import { holdsDatabase, INSTALLED_TEMPLATE, type TemplateSource } from './template.js';

export interface Embedded {
  url: string;
  /** How the data directory came to be: found on disk, copied or loaded from the template (db/template.ts), or made by initdb. */
  origin: 'existing' | 'template' | 'initdb';
  /** The data directory as a gzipped tarball (the template is made from one). */
  dump(): Promise<Blob>;
  close(): Promise<void>;
}

/**
 * PostgreSQL's shared buffers for the embedded database. PGlite's default, 128 MB, is zero-filled by its
 * WASM mmap at every start: about 0.4 s of each start and 100 MB of the hub's RSS for a cache that an
 * embedded hub's small database does not fill (its files stay in the OS page cache besides).
 */
export const EMBEDDED_SHARED_BUFFERS = '32MB';

/**
 * dataDir ':memory:' keeps nothing on disk (tests); it starts from the template's tarball, so a test
 * hub costs no initdb and no migrations. A new DATA_DIR copies the template's directory (its tarball
 * when there is no directory: a checkout whose template predates the directory form). `template`:
 * where a new database comes from (tests pass their own; the template's builder passes none).
 */
export async function startEmbedded(dataDir: string, log?: Logger, template: TemplateSource = INSTALLED_TEMPLATE): Promise<Embedded> {
  // Node drains V8's background tasks (PGlite's WebAssembly compiles among them) whenever its event
  // loop runs out of referenced handles, and nothing else holds the loop while the database boots:
  // a restart's main thread sat idle 150–250 ms there, behind compiles of code it did not yet need
  // (bench/RESULTS.md, thirty-eighth session). A referenced timer keeps the loop turning meanwhile.
  const awake = setInterval(() => {}, 60_000);
  try {
    return await boot(dataDir, log, template);
  } finally {
    clearInterval(awake);
  }
}

async function boot(dataDir: string, log: Logger | undefined, template: TemplateSource): Promise<Embedded> {
  const { PGlite } = await import('@electric-sql/pglite');
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`];
  const where = (dir: string | undefined) => ({ ...(dir ? { dataDir: dir } : {}), startParams });
  let dir: string | undefined;
  if (dataDir !== ':memory:') {
    dir = join(dataDir, 'pg');
    // The database files are the owner's alone: 0700 directories, no group/world bits (data-dir.ts).
    restrictUmask();
    ensurePrivateDir(dataDir);
    ensurePrivateDir(dir);
    tightenTree(dir);
  }
  let db: PGlite | undefined;
  let origin: Embedded['origin'] = dir && holdsDatabase(dir) ? 'existing' : 'initdb';
  const copy = origin === 'initdb' && dir ? template.dir() : undefined;
  const tarball = origin === 'initdb' && !copy ? template.tarball() : undefined;
  if (copy || tarball) {
    try {
      if (copy) copyInto(copy, dir!);
      db = await PGlite.create({ ...where(dir), ...(tarball && { loadDataDir: tarball }) });
      origin = 'template';
    } catch (e) {
      // A damaged template costs the slow path, not the start: clear what it half wrote (the directory held no database).
      log?.warn('the embedded database template could not be loaded; initialising from scratch', { err: e });
      if (dir) {
        rmSync(dir, { recursive: true, force: true });
        ensurePrivateDir(dir);
      }
    }
  }
  if (!db) {
    if (origin === 'initdb' && dir) log?.info('initialising the embedded database — first start takes a while', { dataDir });
    db = await PGlite.create(where(dir));
  }
  // PGlite sets its files' modes itself (0666, whatever the umask): take group/world bits off once it
  // has written them, and again at close. In between the 0700 directory keeps everyone else out.
  if (dir) tightenTree(dir);
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1' });
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  const pg = db;
  return {
    url: `postgresql://postgres@${host}:${port}/postgres`,
    origin,
    dump: () => pg.dumpDataDir('gzip'),
    async close() {
      await server.stop();
      await pg.close();
      if (dir) tightenTree(dir);
    },
  };
}

/**
 * Copies the template directory to `dir` whole or not at all: it is copied beside `dir` and renamed
 * into place, so a start cut short mid-copy leaves no PG_VERSION above missing files for the next
 * start to take for a database.
 */
function copyInto(template: string, dir: string): void {
  const staging = `${dir}.copying`;
  rmSync(staging, { recursive: true, force: true });
  try {
    cpSync(template, staging, { recursive: true });
    if (!holdsDatabase(staging)) throw new Error('the template directory holds no database');
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw e;
  }
  ensurePrivateDir(dir);
}
