// Issue 14, part 3: a configuration mistake names the variable and what was
// wrong, exits 2, and prints no stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const start = (env: Record<string, string>) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, DATABASE_URL: '', REDIS_URL: '', DATA_DIR: mkdtempSync(join(tmpdir(), 'cfgerr-')), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });

for (const [env, message] of [
  [{ PORT: 'abc' }, 'PORT must be a number, got "abc"'],
  [{ BODY_LIMIT: '1MB' }, 'BODY_LIMIT must be a number, got "1MB"'],
  [{ PLAN_QUOTAS: 'maybe' }, 'PLAN_QUOTAS must be on or off, got "maybe"'],
  [{ OWNER_SHARE: '2' }, 'OWNER_SHARE must be a number from 0 to 1, got "2"'],
  [{ HOST_HEARTBEAT_TIMEOUT_MS: '1000' }, 'HOST_HEARTBEAT_TIMEOUT_MS must be at least 2000 (hosts ping at most once a second), got "1000"'],
] as Array<[Record<string, string>, string]>) {
  test(`${Object.keys(env)[0]}=${Object.values(env)[0]} → exit 2 with "${message}", no stack trace`, () => {
    const r = start(env);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr.trim(), `agent-hub: configuration error: ${message}`);
    assert.doesNotMatch(r.stderr + r.stdout, /\n\s+at /, 'no stack trace');
  });
}
