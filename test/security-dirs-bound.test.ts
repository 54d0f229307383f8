// Issue 10, hole 11: a directory listing is bounded in bytes as well as in
// entries, so one listing of a directory full of long names can never exceed
// the channel's frame limit (which would close the channel and every run on
// it). Through a real host CLI, with a run going on the same host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, agentWhenReady, type AgentHostProcess } from './helpers/host.js';
import type { AcceptedRun, Client } from '../src/client/index.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const MiB = 1024 * 1024;
const COUNT = 5000;

let t: TestHub;
let host: AgentHostProcess;
let tmp: string;
let c: Client;
let hostId: string;
let agentId: string;
// Two long segments: every entry's path repeats them (~650 bytes per entry + its ~250-byte name).
const deep = ['a'.repeat(200), 'b'.repeat(200)].join('/');
const nameOf = (i: number) => String(i).padStart(5, '0') + 'n'.repeat(245);

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'dirs-bound-'));
  const root = join(tmp, 'root');
  await mkdir(join(root, 'proj'), { recursive: true });
  await mkdir(join(root, deep), { recursive: true });
  for (let i = 0; i < COUNT; i += 250) {
    await Promise.all(Array.from({ length: Math.min(250, COUNT - i) }, (_, k) => mkdir(join(root, deep, nameOf(i + k)))));
  }
  t = await startTestHub();
  c = t.client((await t.user()).key);
  const { pairKey: pk } = await c.hosts.pairKey();
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pk, '--work-root', root, '--capacity', '2'], { AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: FAKE });
  hostId = (await host.waitFor(/connected to \S+ as hst_\w+/)).match(/hst_\w+/)![0];
  agentId = (await agentWhenReady(c, { name: 'lister', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' }, 10_000)).id;
});

after(async () => {
  host?.kill('SIGKILL');
  await host?.wait();
  await t?.close();
  await rm(tmp, { recursive: true, force: true });
});

test('a listing of many long-named directories is truncated with a flag; the channel and a run on it carry on', async () => {
  const opened = (await c.sessions.create({ agentId, content: 'slow [sleep:2500]' })) as AcceptedRun;
  const sessionId = opened.sessionId;
  assert.ok(sessionId, 'a 202 with the run');
  assert.equal(opened.status, 'processing');

  const d = await c.hosts.directories(hostId, deep);
  assert.equal(d.truncated, true);
  assert.ok(d.entries.length > 0 && d.entries.length < COUNT, `${d.entries.length} entries`);
  const bytes = d.entries.reduce((n, e) => n + Buffer.byteLength(e.name) + Buffer.byteLength(e.path), 0);
  assert.ok(bytes <= MiB, `${bytes} bytes of names and paths`);
  // The first ones in order, each with its path under the listed directory.
  d.entries.forEach((e, i) => {
    assert.equal(e.name, nameOf(i));
    assert.equal(e.path, `${deep}/${nameOf(i)}`);
  });

  // A small listing is complete and says nothing about truncation.
  const small = await c.hosts.directories(hostId);
  assert.deepEqual(small.entries.map((e) => e.name).sort(), ['a'.repeat(200), 'proj']);
  assert.notEqual(small.truncated, true);

  // The channel never dropped, and the run finished normally on it.
  await eventually(async () => {
    const s = await c.sessions.get(sessionId);
    return s.status === 'active' && s.pendingRuns === 0;
  }, 20_000);
  const { items } = await c.sessions.messages(sessionId, { limit: 20 });
  assert.equal(items.at(-1)?.content, 'echo: slow [sleep:2500]');
  assert.ok(!items.some((m) => m.interrupted), 'the run was not interrupted');
  assert.doesNotMatch(host.output(), /disconnected/, host.output());
  assert.notEqual((await c.hosts.get(hostId)).status, 'offline');
});
