// Hole 9 of the security review: DATA_DIR and the embedded database under it
// hold the master secret, the administrator key and every row; they are
// created 0700 and none of their files is writable by group or others,
// whatever the umask of the process that starts the hub.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync, rmSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './helpers/ports.js';

const ROOT = resolve(import.meta.dirname, '..');

function walk(dir: string, out: Array<{ path: string; mode: number; dir: boolean }> = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    out.push({ path: p, mode: st.mode & 0o777, dir: st.isDirectory() });
    if (st.isDirectory()) walk(p, out);
  }
  return out;
}

/** Starts `npm start`'s entry point under umask 000, waits for health, then stops it. */
async function startOnce(dataDir: string): Promise<void> {
  const port = await freePort();
  const proc = spawn('sh', ['-c', `umask 000; exec "${process.execPath}" --import tsx src/main.ts`], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise((r) => proc.on('exit', r));
  const end = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status === 200) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > end || proc.exitCode !== null) {
      proc.kill('SIGKILL');
      throw new Error(`hub did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  proc.kill('SIGTERM');
  await exited;
}

test('DATA_DIR and the embedded database are private (0700, nothing group/world-writable) under umask 000', async () => {
  const base = mkdtempSync(join(tmpdir(), 'hub-perm-'));
  const dataDir = join(base, 'data');
  try {
    await startOnce(dataDir);
    assert.equal(statSync(dataDir).mode & 0o777, 0o700, 'DATA_DIR is 0700');
    assert.equal(statSync(join(dataDir, 'pg')).mode & 0o777, 0o700, 'DATA_DIR/pg is 0700');
    const loose = walk(dataDir).filter((f) => f.mode & 0o022);
    assert.deepEqual(loose.map((f) => `${f.path} ${f.mode.toString(8)}`), [], 'no file or directory is group/world-writable');
    const readable = walk(dataDir).filter((f) => !f.dir && f.mode & 0o044);
    assert.deepEqual(readable.map((f) => `${f.path} ${f.mode.toString(8)}`), [], 'no file is group/world-readable');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('an existing DATA_DIR left open by an older version is made private at start', async () => {
  const base = mkdtempSync(join(tmpdir(), 'hub-perm-'));
  const dataDir = join(base, 'data');
  try {
    mkdirSync(join(dataDir, 'pg'), { recursive: true });
    chmodSync(dataDir, 0o777);
    chmodSync(join(dataDir, 'pg'), 0o777);
    await startOnce(dataDir);
    assert.equal(statSync(dataDir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dataDir, 'pg')).mode & 0o777, 0o700);
    assert.deepEqual(walk(dataDir).filter((f) => f.mode & 0o022).map((f) => f.path), []);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
