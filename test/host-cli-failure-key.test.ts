// A failed run's text goes to whoever used the agent (a stranger, for a public one) and to the hub's logs.
// An engine answering 401 may echo the endpoint key it was given; the hub scrubs what looks like a key, but
// a key of another shape (base64 with `/` and `+`, in pieces shorter than its patterns) went through whole.
// agent-host knows the exact values it gave the engine and replaces them before the text leaves the machine.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import { scrubSecrets } from '../src/log.js';
import type { HostToHub } from '../host-protocol/frames.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const KEY = 'q8Zr/4kP+2mXv/9Lw+Tn3Q==';
const root = mkdtempSync(join(tmpdir(), 'failure-key-'));
const claudeDir = join(root, 'claude');
mkdirSync(join(root, 'work', 'proj'), { recursive: true });
mkdirSync(claudeDir);
writeFileSync(join(claudeDir, 'settings.json'), JSON.stringify({ env: { ANTHROPIC_BASE_URL: 'https://llm.example', ANTHROPIC_AUTH_TOKEN: KEY } }));
process.env.CLAUDE_CONFIG_DIR = claudeDir; // where the fake engine reads the key it echoes
after(() => rmSync(root, { recursive: true, force: true }));

async function failedRun(guest: boolean) {
  const frames: HostToHub[] = [];
  const f: RunStartFrame = { t: 'run.start', runId: `run_k${guest ? 'g' : 'o'}`, sessionId: 'ses_1', engine: 'claude-code', prompt: 'go [exit:3] [stderr-key]', workDir: 'proj', mode: 'default', guest };
  const h = startRun(f, { workRoot: join(root, 'work'), claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: join(root, 'runs'), hostHome: join(root, 'host') }, (x) => frames.push(x));
  await h.done;
  return frames.at(-1) as any;
}

test("an engine's failure text echoing its endpoint key leaves the host without it, for the owner's runs and guests'", async () => {
  assert.ok(scrubSecrets(`invalid key ${KEY}`).includes(KEY), "the hub's patterns miss this key (else this shows nothing)");
  for (const guest of [false, true]) {
    const end = await failedRun(guest);
    assert.equal(end.ok, false);
    assert.match(end.error.message, /401 invalid key/, 'the failure itself is told');
    assert.ok(!end.error.message.includes(KEY), `${guest ? 'guest' : 'owner'} run: ${end.error.message}`);
    assert.ok(!end.error.message.includes('4kP+2mXv'), 'nor a piece of it');
  }
});
