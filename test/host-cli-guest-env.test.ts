// A guest's run inherited agent-host's whole environment: the owner's shell secrets (a cloud key, a
// GitHub token, a database URL) reached any tool the guest could make the engine run — a command the
// agent's project settings allow, a test script it may edit. Now a guest's engine gets the variables
// an engine needs (paths, locale, terminal, proxies and certificates, Claude Code's and Anthropic's own),
// plus what the owner lists in AGENT_HOST_GUEST_ENV (names, or prefixes ending in `*`; `*` alone for all); the owner's own
// runs keep the whole environment.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import { guestEnv } from '../src/host-cli/guest-env.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'guest-env-'));
const work = join(root, 'work');
mkdirSync(join(work, 'proj'), { recursive: true });
const logFile = join(root, 'claude.log');
after(() => rmSync(root, { recursive: true, force: true }));

const saved = { ...process.env };
after(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

async function envKeysOf(over: Partial<RunStartFrame>, guestEnvList?: string[]): Promise<string[]> {
  const f: RunStartFrame = { t: 'run.start', runId: `run_${Math.random().toString(36).slice(2)}`, sessionId: 'ses_1', engine: 'claude-code', prompt: 'hi', workDir: 'proj', mode: 'default', ...over };
  const h = startRun(f, { workRoot: work, claudeBin: FAKE, claudeConfigDir: join(root, 'claude'), runFilesDir: join(root, 'runs'), hostHome: join(root, 'home'), guestEnv: guestEnvList }, () => {});
  await h.done;
  const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  return lines.at(-1).envKeys; // the runs here go one after another
}

test("a guest's engine gets no secret of agent-host's environment; the owner's own run does", async () => {
  Object.assign(process.env, {
    FAKE_CLAUDE_LOG: logFile, AWS_SECRET_ACCESS_KEY: 'owner-aws', GITHUB_TOKEN: 'owner-gh', DATABASE_URL: 'postgres://owner',
    ANTHROPIC_API_KEY: 'sk-engine', CLAUDE_CODE_USE_BEDROCK: '1', HTTPS_PROXY: 'http://proxy:3128', LC_ALL: 'C.UTF-8',
    XDG_RUNTIME_DIR: '/run/user/1000', SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1', XDG_CONFIG_HOME: '/home/o/.config',
  });
  const guest = await envKeysOf({ guest: true }, ['FAKE_CLAUDE_*']);
  for (const k of ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'DATABASE_URL', 'XDG_RUNTIME_DIR', 'SSH_AUTH_SOCK']) assert.ok(!guest.includes(k), `${k} reached a guest's engine`);
  for (const k of ['PATH', 'ANTHROPIC_API_KEY', 'CLAUDE_CODE_USE_BEDROCK', 'HTTPS_PROXY', 'LC_ALL', 'XDG_CONFIG_HOME', 'FAKE_CLAUDE_LOG']) assert.ok(guest.includes(k), `${k} is what an engine needs`);
  const own = await envKeysOf({}, ['FAKE_CLAUDE_*']);
  for (const k of ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'DATABASE_URL']) assert.ok(own.includes(k), `the owner's run keeps ${k}`);
  const listed = await envKeysOf({ guest: true }, ['FAKE_CLAUDE_*', 'AWS_*', 'GITHUB_TOKEN']);
  for (const k of ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN']) assert.ok(listed.includes(k), `the owner listed ${k}`);
  assert.ok(!listed.includes('DATABASE_URL'));
});

test('the list: names and `*` prefixes, blanks ignored; a bare `*` is the owner saying "everything"', () => {
  const env = { PATH: '/bin', SECRET: 's', AWS_A: 'a', AWS_B: 'b', HOME: '/h' };
  assert.deepEqual(Object.keys(guestEnv(env, [' AWS_* ', '', 'SECRET'])).sort(), ['AWS_A', 'AWS_B', 'HOME', 'PATH', 'SECRET']);
  assert.deepEqual(Object.keys(guestEnv(env, ['*'])).sort(), ['AWS_A', 'AWS_B', 'HOME', 'PATH', 'SECRET']);
  assert.deepEqual(Object.keys(guestEnv(env, [])).sort(), ['HOME', 'PATH']);
});
