// The zero-setup default: PGlite (PostgreSQL compiled to WASM) in this
// process, exposed on a loopback port so MikroORM's ordinary PostgreSQL
// driver talks to it. One SQL dialect everywhere. PGlite serves one
// connection at a time, hence the pool of one (see db/orm.ts).
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { ensurePrivateDir, restrictUmask, tightenTree } from '../data-dir.js';

export interface Embedded {
  url: string;
  close(): Promise<void>;
}

/** dataDir ':memory:' keeps nothing on disk (tests). */
export async function startEmbedded(dataDir: string): Promise<Embedded> {
  let dir: string | undefined;
  if (dataDir !== ':memory:') {
    dir = join(dataDir, 'pg');
    // The database files are the owner's alone: 0700 directories, no group/world bits (data-dir.ts).
    restrictUmask();
    ensurePrivateDir(dataDir);
    ensurePrivateDir(dir);
    tightenTree(dir);
  }
  const db = await PGlite.create(dir ? { dataDir: dir } : {});
  // PGlite sets its files' modes itself (0666, whatever the umask): take group/world bits off once it
  // has written them, and again at close. In between the 0700 directory keeps everyone else out.
  if (dir) tightenTree(dir);
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1' });
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  return {
    url: `postgresql://postgres@${host}:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
      if (dir) tightenTree(dir);
    },
  };
}
