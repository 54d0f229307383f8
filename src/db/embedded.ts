// The zero-setup default: PGlite (PostgreSQL compiled to WASM) in this
// process, exposed on a loopback port so MikroORM's ordinary PostgreSQL
// driver talks to it. One SQL dialect everywhere. PGlite serves one
// connection at a time, hence the pool of one (see db/orm.ts).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface Embedded {
  url: string;
  close(): Promise<void>;
}

/** dataDir ':memory:' keeps nothing on disk (tests). */
export async function startEmbedded(dataDir: string): Promise<Embedded> {
  let dir: string | undefined;
  if (dataDir !== ':memory:') {
    dir = join(dataDir, 'pg');
    mkdirSync(dir, { recursive: true });
  }
  const db = await PGlite.create(dir ? { dataDir: dir } : {});
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1' });
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  return {
    url: `postgresql://postgres@${host}:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
