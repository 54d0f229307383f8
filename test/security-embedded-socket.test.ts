// The embedded database trusts whoever connects (PGlite's socket server has no
// authentication). Served on a loopback TCP port, any local process — another
// user's, or an engine running a stranger's prompt on a machine that also runs
// the hub — could read and rewrite every account, key hash and balance. It is
// served on a Unix socket in a 0700 directory instead: only the hub's own user
// reaches it, like DATA_DIR itself. Linux only (reads /proc); embedded PGlite only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { startTestHub } from './helpers/hub.js';
import { startEmbedded } from '../src/db/embedded.js';
import { createLogger } from '../src/log.js';

const skip = process.env.DATABASE_URL ? 'embedded PGlite only (the pass without DATABASE_URL runs it)' : process.platform !== 'linux' ? 'reads /proc' : false;

/** TCP ports this process listens on (from /proc: its socket inodes among the kernel's LISTEN entries). */
function ownListeningPorts(): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9])) continue; // 0A: LISTEN
      ports.add(parseInt(f[1].split(':')[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

test('a hub on the embedded database listens on its own port only: the database is on no TCP port', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-socket-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const dataDir of [':memory:', dir]) {
    const h = await startTestHub({ dataDir });
    try {
      assert.deepEqual(ownListeningPorts(), [h.hub.port], `${dataDir}: the hub's HTTP port and nothing else`);
    } finally {
      await h.close();
    }
  }
});

test('the embedded database answers on a Unix socket in a directory only its owner can enter, gone after close', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-socket-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const dataDir of [':memory:', dir]) {
    const booting = startEmbedded(dataDir, createLogger('silent'));
    const e = await booting.ready;
    const socketDir = decodeURIComponent(new URL(e.url).hostname);
    assert.ok(socketDir.startsWith('/'), 'a socket directory, not a host');
    assert.equal(booting.url, e.url, 'the address is known before the database is up');
    assert.equal(statSync(socketDir).mode & 0o777, 0o700);
    assert.equal(statSync(socketDir).uid, process.getuid!());
    assert.deepEqual(await queryOver(e.url, 'select 1 as one'), [{ one: 1 }]);
    await e.close();
    assert.ok(!existsSync(socketDir), 'the socket and its directory are removed at close');
    if (dataDir !== ':memory:') assert.equal(dirname(socketDir), dir, "a DATA_DIR's socket lives in it");
  }
});

test('a second hub on a DATA_DIR in use refuses to start (PGlite takes no lock); a socket left by a killed hub does not stop a start', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-socket-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = await startEmbedded(dir, createLogger('silent')).ready;
  try {
    await assert.rejects(startEmbedded(dir, createLogger('silent')).ready, (e: Error) => {
      assert.match(e.message, /DATA_DIR .* is in use by another running hub/);
      return true;
    });
    // PGlite's socket server takes one connection at a time and lets go of the refused start's probe a moment after it hung up.
    const [{ one }] = (await retrying(() => queryOver(first.url, 'select 1 as one'))) as Array<{ one: number }>;
    assert.equal(one, 1, 'the first still answers on its socket');
  } finally {
    await first.close();
  }
  // A process killed while listening leaves its socket file behind.
  const socketPath = join(dir, 'run', '.s.PGSQL.5432');
  mkdirSync(join(dir, 'run'), { mode: 0o700 });
  const killed = spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => process.kill(process.pid, 'SIGKILL'))`]);
  assert.equal(killed.signal, 'SIGKILL');
  assert.ok(existsSync(socketPath), 'a stale socket file');
  writeFileSync(join(dir, 'run', 'notes.txt'), 'not the hub\'s'); // a file someone else put there
  const again = await startEmbedded(dir, createLogger('silent')).ready;
  try {
    assert.equal(((await queryOver(again.url, 'select 2 as two')) as Array<{ two: number }>)[0].two, 2);
  } finally {
    await again.close();
  }
  assert.ok(!existsSync(socketPath), 'the socket is removed at close');
  assert.ok(existsSync(join(dir, 'run', 'notes.txt')), 'what the hub did not put in run/ stays');
});

async function retrying<T>(f: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await f();
    } catch (e) {
      if (i >= 20) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function queryOver(url: string, sql: string): Promise<unknown[]> {
  const u = new URL(url);
  const c = new pg.Client({ host: decodeURIComponent(u.hostname), port: Number(u.port), user: 'postgres', database: 'postgres' });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}
