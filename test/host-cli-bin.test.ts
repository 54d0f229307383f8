// `agent-host` works from the package's bin without a build (issue 14 part 4):
// what `npm link` puts on PATH and what `npx agent-host` runs in the checkout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';

test('package.json bin agent-host is an executable that runs the CLI from source', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  const bin = pkg.bin['agent-host'];
  assert.ok(statSync(bin).mode & 0o111, `${bin} is executable`);
  const r = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /agent-host pair --hub URL/);
  assert.match(r.stdout, /AGENT_HOST_PAIR_KEY/);
  assert.match(r.stdout, /status/);
  const bad = spawnSync(process.execPath, [bin, 'frobnicate'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(bad.status, 2, 'usage errors exit 2 through the bin too');
});

test('npx agent-host in the checkout runs the same CLI', () => {
  const r = spawnSync('npx', ['--no-install', 'agent-host', '--help'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /connects this machine to an Agent Hub/);
});
