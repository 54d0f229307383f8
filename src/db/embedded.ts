// The zero-setup default: PGlite (PostgreSQL compiled to WASM) in this
// process, served on a Unix socket so MikroORM's ordinary PostgreSQL driver
// talks to it. One SQL dialect everywhere. PGlite serves one connection at a
// time, hence the pool of one (see db/orm.ts).
// PGlite is imported here on demand: a hub on PostgreSQL never loads it.
import { cpSync, existsSync, mkdtempSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { ensurePrivateDir, restrictUmask, tightenTree } from '../data-dir.js';
import type { Logger } from '../log.js';
import { holdsDatabase, INSTALLED_TEMPLATE, type TemplateSource } from './template.js';

export interface Embedded {
  /** postgresql://postgres@<the socket's directory, percent-encoded>:5432/postgres */
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

/** Connections the embedded database's socket accepts at once (the hub's pool of one, and its replacement). */
const EMBEDDED_MAX_CONNECTIONS = 4;

/** The embedded database starting: its address is known at once, the database is up when `ready` resolves. */
export interface EmbeddedBoot {
  url: string;
  ready: Promise<Embedded>;
}

/** The port in the socket file's name (`.s.PGSQL.<port>`, what libpq and node-postgres look for); no TCP port is opened. */
const SOCKET_PORT = 5432;

/** Longest Unix socket path that binds everywhere (sun_path: 108 bytes on Linux, 104 on macOS, with its NUL). */
const MAX_SOCKET_PATH = 103;

/**
 * dataDir ':memory:' keeps nothing on disk (tests); it starts from the template's tarball, so a test
 * hub costs no initdb and no migrations. A new DATA_DIR copies the template's directory (its tarball
 * when there is no directory: a checkout whose template predates the directory form). `template`:
 * where a new database comes from (tests pass their own; the template's builder passes none).
 *
 * PGlite's socket server authenticates no one, so it listens on a Unix socket in a 0700 directory
 * (`DATA_DIR/run`, or a temporary one for ':memory:' or a DATA_DIR too deep for a socket path): only
 * the hub's own user can connect, as only they can read DATA_DIR. A loopback TCP port would let any
 * local process — another user's, an engine running a stranger's prompt — read and rewrite every row.
 * The address is fixed before the boot, so the ORM prepares itself meanwhile (db/orm.ts).
 */
export function startEmbedded(dataDir: string, log?: Logger, template: TemplateSource = INSTALLED_TEMPLATE): EmbeddedBoot {
  if (dataDir !== ':memory:') {
    // The database files are the owner's alone: 0700 directories, no group/world bits (data-dir.ts).
    restrictUmask();
    ensurePrivateDir(dataDir);
  }
  const socket = socketDirFor(dataDir);
  // Node drains V8's background tasks (PGlite's WebAssembly compiles among them) whenever its event
  // loop runs out of referenced handles, and nothing else holds the loop while the database boots:
  // a restart's main thread sat idle 150–250 ms there, behind compiles of code it did not yet need
  // (bench/RESULTS.md, thirty-eighth session). A referenced timer keeps the loop turning meanwhile.
  const awake = setInterval(() => {}, 60_000);
  const ready = boot(dataDir, socket, log, template).finally(() => clearInterval(awake));
  ready.catch(() => {}); // the caller awaits it later (after preparing the ORM); a failure meanwhile is not "unhandled"
  return { url: urlOf(socket), ready };
}

function urlOf(socket: SocketDir): string {
  return `postgresql://postgres@${encodeURIComponent(socket.dir)}:${SOCKET_PORT}/postgres`;
}

interface SocketDir {
  dir: string;
  /** A new directory of the system's temporary folder (no other hub can be listening in it). */
  temporary: boolean;
}

function socketDirFor(dataDir: string): SocketDir {
  if (dataDir !== ':memory:') {
    const dir = join(resolve(dataDir), 'run');
    if (join(dir, `.s.PGSQL.${SOCKET_PORT}`).length <= MAX_SOCKET_PATH) {
      ensurePrivateDir(dir);
      return { dir, temporary: false };
    }
  }
  return { dir: mkdtempSync(join(tmpdir(), 'agent-hub-pg-')), temporary: true }; // mkdtemp: 0700
}

async function boot(dataDir: string, socket: SocketDir, log: Logger | undefined, template: TemplateSource): Promise<Embedded> {
  const socketPath = join(socket.dir, `.s.PGSQL.${SOCKET_PORT}`);
  try {
    return await open(dataDir, socket, socketPath, log, template);
  } catch (e) {
    if (socket.temporary) removeSocketDir(socket);
    throw e;
  }
}

/** A temporary socket directory goes whole; DATA_DIR/run only when empty (never files someone else put there). */
function removeSocketDir(socket: SocketDir): void {
  if (socket.temporary) return rmSync(socket.dir, { recursive: true, force: true });
  try {
    rmdirSync(socket.dir);
  } catch {
    // not empty, or gone already
  }
}

async function open(dataDir: string, socket: SocketDir, socketPath: string, log: Logger | undefined, template: TemplateSource): Promise<Embedded> {
  // PGlite takes no lock on its directory: a second hub opening it would corrupt it. The first one's
  // socket answering says it is running; a socket nobody answers is left from a stop without close.
  if (!socket.temporary && existsSync(socketPath)) {
    if (await answers(socketPath)) throw new Error(`DATA_DIR ${dataDir} is in use by another running hub (its embedded database answers on ${socketPath}); stop that hub or choose another DATA_DIR`);
    rmSync(socketPath, { force: true });
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`];
  const where = (dir: string | undefined) => ({ ...(dir ? { dataDir: dir } : {}), startParams });
  let dir: string | undefined;
  if (dataDir !== ':memory:') {
    dir = join(dataDir, 'pg');
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
  // The hub's pool holds one connection, but a lost one is replaced at once, and the server may not yet
  // have processed the old one's close: with its default of one it refused the new connection with a
  // line node-postgres waits on forever. Its queue serves connections one statement at a time and rolls
  // back a transaction whose connection left, so a few at once are safe.
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: EMBEDDED_MAX_CONNECTIONS });
  try {
    await server.start();
  } catch (e) {
    await db.close();
    throw e;
  }
  const pg = db;
  return {
    url: urlOf(socket),
    origin,
    dump: () => pg.dumpDataDir('gzip'),
    async close() {
      await server.stop();
      rmSync(socketPath, { force: true });
      removeSocketDir(socket);
      await pg.close();
      if (dir) tightenTree(dir);
    },
  };
}

/** Whether something accepts connections on the Unix socket at `path`. */
function answers(path: string): Promise<boolean> {
  return new Promise((done) => {
    const s = connect(path);
    s.once('connect', () => (s.destroy(), done(true)));
    s.once('error', () => done(false));
  });
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
