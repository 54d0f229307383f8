// A run of a user other than the agent's owner got the owner's own engine settings: Claude Code reads
// the owner's user settings (~/.claude/settings.json) — permission rules that let tools run without
// asking (`permissions.allow`), hooks, MCP servers holding the owner's tokens — so a guest held in
// `default` mode ran every command the owner had allowed for itself. The hub now marks such a run
// (`run.start` `guest: true`) and the reference host starts it with --setting-sources=project,local
// (the agent's own directory's settings stay: the owner set them for this agent), --strict-mcp-config
// (no MCP server) and --settings=<file> holding only the model settings the hub manages (the six env
// keys of the user settings, and the owner's deny rules: they only take power away), a 0600 file that
// lives as long as the run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import { homeSecrets, removeLeftovers } from '../src/host-cli/guest-settings.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'guest-settings-'));
const work = join(root, 'work');
const claudeDir = join(root, 'claude');
const runDir = join(root, 'runs');
const hostHome = join(root, 'agent-host');
mkdirSync(join(work, 'proj'), { recursive: true });
mkdirSync(claudeDir);
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
process.env.AGENT_HOST_GUEST_ENV = 'FAKE_CLAUDE_*'; // the fake engine's log reaches guests' runs too (host-cli-guest-env.test.ts)
const logs = () => readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

const OWNER_SETTINGS = {
  permissions: { allow: ['Bash(*)', 'Read(~/.ssh/**)'], deny: ['Read(~/.aws/**)', 'Bash(curl:*)'], defaultMode: 'acceptEdits', disableBypassPermissionsMode: 'disable' },
  hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'echo owner-hook' }] }] },
  env: { ANTHROPIC_BASE_URL: 'https://llm.example', ANTHROPIC_AUTH_TOKEN: 'sk-owner-endpoint', ANTHROPIC_DEFAULT_SONNET_MODEL: 'm1', OWNER_SECRET: 'not-for-guests' },
};
writeFileSync(join(claudeDir, 'settings.json'), JSON.stringify(OWNER_SETTINGS));

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  await t.close();
  rmSync(root, { recursive: true, force: true });
});

const frame = (over: Partial<RunStartFrame> = {}): RunStartFrame => ({
  t: 'run.start', runId: 'run_g1', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir: 'proj', mode: 'default', ...over,
});
async function run(f: RunStartFrame) {
  const frames: HostToHub[] = [];
  const h = startRun(f, { workRoot: work, claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: runDir, hostHome }, (x) => frames.push(x));
  await h.done;
  return frames;
}

test("a guest's run: no user settings, no MCP servers, only the hub's model settings; the owner's run is as before", async () => {
  const frames = await run(frame({ guest: true }));
  assert.equal((frames.at(-1) as any).ok, true);
  const g = logs().at(-1);
  assert.ok(g.argv.includes('--setting-sources=project,local'), JSON.stringify(g.argv));
  assert.ok(g.argv.includes('--strict-mcp-config'));
  const file = g.argv.find((x: string) => x.startsWith('--settings='))?.slice('--settings='.length);
  assert.ok(file, 'a settings file');
  assert.deepEqual(g.settings, {
    env: { ANTHROPIC_BASE_URL: 'https://llm.example', ANTHROPIC_AUTH_TOKEN: 'sk-owner-endpoint', ANTHROPIC_DEFAULT_SONNET_MODEL: 'm1' },
    permissions: {
      deny: [
        'Read(~/.aws/**)', 'Bash(curl:*)', `Read(/${hostHome}/**)`, `Edit(/${hostHome}/**)`, `Read(/${claudeDir}/**)`, `Edit(/${claudeDir}/**)`,
        `Edit(/${join(work, 'proj')}/.claude/**)`, `Edit(/${join(work, 'proj')}/**/.claude/**)`,
        `Edit(/${join(work, 'proj')}/.git)`, `Edit(/${join(work, 'proj')}/.git/**)`, `Edit(/${join(work, 'proj')}/**/.git)`, `Edit(/${join(work, 'proj')}/**/.git/**)`,
        `Edit(/${join(work, 'proj')}/.mcp.json)`,
        ...homeSecrets(homedir()),
      ],
      disableBypassPermissionsMode: 'disable',
    },
  }, 'the managed keys and what takes power away, nothing that gives it');
  // Absolute paths are written `//path` in Claude Code's rules: the host's credential and the owner's engine
  // configuration (its login, the endpoint key) are out of a guest's file tools' reach.
  assert.ok(g.settings.permissions.deny.includes(`Read(//${hostHome.slice(1)}/**)`));
  // The project's own settings apply to a guest's runs (the owner's per-agent choice), so a guest allowed to
  // edit files must not write them: hooks or allow rules there would run commands on its next turn.
  assert.ok(g.settings.permissions.deny.includes(`Edit(//${join(work, 'proj').slice(1)}/.claude/**)`));
  assert.ok(!existsSync(file), 'the file is gone with the run');

  await run(frame({ runId: 'run_o1' }));
  const o = logs().at(-1);
  assert.ok(!o.argv.some((x: string) => x.startsWith('--setting-sources') || x.startsWith('--settings') || x === '--strict-mcp-config'), JSON.stringify(o.argv));
});

test('the settings file is private to the host user while it exists', async () => {
  const f = frame({ runId: 'run_g2', guest: true, prompt: 'slow [sleep:400]' });
  const frames: HostToHub[] = [];
  const h = startRun(f, { workRoot: work, claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: runDir }, (x) => frames.push(x));
  const entry = await eventually(async () => logs().find((l) => l.prompt === f.prompt), 5000, 20);
  const file = entry.argv.find((x: string) => x.startsWith('--settings=')).slice('--settings='.length);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  await h.done;
});

test('the hub marks a guest\'s run.start, never the owner\'s', async () => {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 4 });
  const own = t.client(owner.key);
  const a = await agentWhenReady(own, { name: 'guest-mark', hostId, engine: 'claude-code' });
  const guest = await t.user();
  await t.client(guest.key).invites.decide((await own.agents.shareLink(a.id)).token, true);
  const mine: any = await own.sessions.create({ agentId: a.id, content: 'mine' });
  const theirs: any = await t.client(guest.key).sessions.create({ agentId: a.id, content: 'theirs' });
  const start = (id: string) => host.next((f) => f.t === 'run.start' && (f as any).runId === id) as Promise<any>;
  assert.equal((await start(mine.taskId)).guest, undefined);
  assert.equal((await start(theirs.taskId)).guest, true);
  host.close();
});

test('files a killed agent-host left behind go at the next start; a live one\'s stay', () => {
  const dir = join(root, 'leftovers');
  mkdirSync(dir, { recursive: true });
  const dead = join(dir, 'guest-run_x-2147483646.json'); // no such pid
  const live = join(dir, `guest-run_y-${process.pid}.json`);
  const other = join(dir, 'notes.json');
  for (const f of [dead, live, other]) writeFileSync(f, '{}');
  assert.equal(removeLeftovers(dir), 1);
  assert.deepEqual([existsSync(dead), existsSync(live), existsSync(other)], [false, true, true]);
  assert.equal(removeLeftovers(join(root, 'no-such-dir')), 0);
});
