// Issue 14, part 4: a damaged credential file is named in the CLI's error, so
// its owner knows what to remove before pairing again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

for (const [what, content] of [['not JSON', '{"hub": "http://127.0.0.1:1", '], ['JSON null', 'null'], ['fields missing', '{"hub": "http://x"}']]) {
  test(`a credential file that is ${what}: "agent-host run" names the file and exits 1`, () => {
    const home = mkdtempSync(join(tmpdir(), 'cred-'));
    const file = join(home, 'credential.json');
    writeFileSync(file, content, { mode: 0o600 });
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/host-cli/main.ts', 'run'], { env: { ...process.env, AGENT_HOST_HOME: home }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.ok(r.stderr.includes(`${file} is not a pairing file`), r.stderr);
    assert.match(r.stderr, /pair again/);
  });
}
