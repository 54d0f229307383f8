// What an engine prints is a stranger's doing (a guest's prompt steers the model), and the
// host relays it to the hub. Whatever it prints, the host sends only frames the hub accepts
// (a refused frame closes the channel and ends every run on the host) and never crashes.
// The runner against the fake engine, then the real CLI against a hub that judges each frame.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import { encodeHostFrame } from '../host-protocol/codec.js';
import { FRAME_MAX_BYTES } from '../host-protocol/limits.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { pidAlive, spawnAgentHost } from './helpers/host.js';
import { startMiniHub } from './helpers/mini-hub.js';
import { savePairing } from '../src/host-cli/home.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'host-output-'));
mkdirSync(join(root, 'proj'));
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
const logs = () => readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

const frame = (prompt: string): RunStartFrame => ({ t: 'run.start', runId: 'run_1', sessionId: 'ses_1', engine: 'claude-code', prompt, workDir: 'proj', mode: 'default' });

/** Runs one turn; every frame the runner emits is judged as the hub would judge it. */
async function run(prompt: string, emit?: (f: HostToHub) => void) {
  const frames: HostToHub[] = [];
  const refused: string[] = [];
  const h = startRun(frame(prompt), { workRoot: root, claudeBin: FAKE }, (f) => {
    const e = encodeHostFrame(f);
    if (e.error !== undefined) refused.push(`${f.t}: ${e.error}`);
    frames.push(f);
    emit?.(f);
  });
  await h.done;
  const ends = frames.filter((f) => f.t === 'run.end') as Array<HostToHub & { t: 'run.end' }>;
  assert.equal(ends.length, 1, 'exactly one run.end');
  return { frames, refused, end: ends[0], messages: frames.filter((f) => f.t === 'run.message') as Array<HostToHub & { t: 'run.message' }> };
}

test('a tool input nested deeper than a frame may be is sent as its JSON text, and the run goes on', async () => {
  const r = await run('[deep:120]');
  assert.deepEqual(r.refused, []);
  const input = r.messages.flatMap((m) => m.blocks).find((b) => b.toolId === 'toolu_deep')!.toolInput;
  assert.equal(typeof input, 'string');
  assert.equal(JSON.parse(input as string).command, 'ls', 'short enough to keep whole: only its shape changed');
  assert.equal(r.end.ok, true);
});

test('a tool input of more keys than the hub decodes is sent as a JSON string', async () => {
  const r = await run('[wide:1001]');
  assert.deepEqual(r.refused, []);
  const input = r.messages.flatMap((m) => m.blocks).find((b) => b.toolId === 'toolu_wide')!.toolInput as string;
  assert.equal(JSON.parse(input).k1000, 1000, 'small enough to keep whole: only its shape changed');
});

test('a tool result over the hub\'s string limit is cut, marked, and fits a frame', async () => {
  const r = await run('[big-result:1100000]');
  assert.deepEqual(r.refused, []);
  const result = r.messages.flatMap((m) => m.blocks).find((b) => b.kind === 'tool_result')!.toolResult!.content;
  assert.match(JSON.stringify(result), /truncated by agent-host/);
});

test('an assistant text of 4.5 MB is cut to fit one frame, with a mark saying so', async () => {
  const r = await run('[big:4500000]');
  assert.deepEqual(r.refused, []);
  const text = r.messages.flatMap((m) => m.blocks).find((b) => b.kind === 'text' && b.content!.startsWith('yyy'))!.content!;
  assert.ok(text.length < FRAME_MAX_BYTES);
  assert.match(text, /truncated by agent-host: 4500000 bytes/);
});

test('a message of 501 blocks is sent as two messages carrying every block', async () => {
  const r = await run('[blocks:501]');
  assert.deepEqual(r.refused, []);
  const texts = r.messages.flatMap((m) => m.blocks).map((b) => b.content).filter((c) => /^b\d+$/.test(c ?? ''));
  assert.equal(texts.length, 501);
  assert.equal(texts.at(-1), 'b500');
});

test('a model name over 200 characters is cut to the schema\'s length in run.init and run.end', async () => {
  const r = await run('[model:300]');
  assert.deepEqual(r.refused, []);
  assert.equal(r.end.model, 'm'.repeat(200));
  assert.equal(r.end.ok, true);
});

test('a throw while handling one engine line ends only that run, ENGINE_FAILED, with the engine gone', async () => {
  let thrown = false;
  const r = await run('[tools] [sleep:30000]', (f) => {
    if (f.t === 'run.message' && !thrown) {
      thrown = true;
      throw new Error('boom');
    }
  });
  assert.equal(r.end.ok, false);
  assert.equal(r.end.error?.code, 'ENGINE_FAILED');
  assert.match(r.end.error!.message, /boom/);
  assert.equal(pidAlive(logs().at(-1).pid), false);
});

test('agent-host survives a guest\'s deeply nested tool input; the other run goes on and the hub closes nothing', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'host-output-home-'));
  const hub = await startMiniHub({
    onFrame: (f, h) => {
      if (f.t === 'hello') h.send({ t: 'run.start', runId: 'run_other', sessionId: 's1', engine: 'claude-code', prompt: 'long [sleep:30000]', workDir: 'proj', mode: 'default' });
      if (f.t === 'run.delta' && f.runId === 'run_other' && !h.frames.items.some((x) => x.t === 'run.init' && x.runId === 'run_evil')) {
        h.send({ t: 'run.start', runId: 'run_evil', sessionId: 's2', engine: 'claude-code', prompt: '[deep:120] [blocks:600] [model:300]', workDir: 'proj', mode: 'default' });
      }
    },
  });
  savePairing({ hub: hub.url, hostId: 'hst_mini', credential: 'ahh_x', name: 'victim' }, { AGENT_HOST_HOME: home });
  const host = spawnAgentHost(['run', '--work-root', root, '--capacity', '2'], { AGENT_HOST_HOME: home, CLAUDE_BIN: FAKE });
  t.after(async () => {
    host.kill('SIGKILL');
    for (const l of logs()) if (pidAlive(l.pid)) process.kill(l.pid, 'SIGKILL');
    await hub.close();
  });
  const end = (await hub.frames.until((f) => f.t === 'run.end' && f.runId === 'run_evil', 20_000, () => host.output())) as HostToHub & { t: 'run.end' };
  assert.equal(end.ok, true);
  assert.deepEqual(hub.refused, []);
  assert.equal(host.proc.exitCode, null, 'agent-host is still running');
  hub.send({ t: 'run.abort', runId: 'run_other', id: 9 });
  await hub.frames.until((f) => f.t === 'reply' && f.id === 9, 15_000, () => host.output());
  const other = (await hub.frames.until((f) => f.t === 'run.end' && f.runId === 'run_other', 1000)) as HostToHub & { t: 'run.end' };
  assert.equal(other.aborted, true);
});
