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
import { spawnAgentHost, eventually, type AgentHostProcess } from './helpers/host.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const MiB = 1024 * 1024;
const COUNT = 5000;

let t: TestHub;
let host: AgentHostProcess;
let tmp: string;
let user: { id: string; key: string };
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
  user = await t.user();
  const pk = (await t.api('POST', '/api/v1/hosts/pair-key', { token: user.key })).body.data.pairKey;
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pk, '--work-root', root, '--capacity', '2'], { AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: FAKE });
  hostId = (await host.waitFor(/connected to \S+ as hst_\w+/)).match(/hst_\w+/)![0];
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: user.key, body: { name: 'lister', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' } });
    return r.status === 201 ? r : undefined;
  });
  agentId = a.body.data.id;
});

after(async () => {
  host?.kill('SIGKILL');
  await host?.wait();
  await t?.close();
  await rm(tmp, { recursive: true, force: true });
});

test('a listing of many long-named directories is truncated with a flag; the channel and a run on it carry on', async () => {
  const opened = await t.api('POST', '/api/v1/sessions', { token: user.key, body: { agentId, content: 'slow [sleep:2500]' } });
  assert.equal(opened.status, 202, opened.text);
  const sessionId = opened.body.sessionId;
  assert.equal(opened.body.status, 'processing');

  const r = await t.api('GET', `/api/v1/hosts/${hostId}/directories?path=${encodeURIComponent(deep)}`, { token: user.key });
  assert.equal(r.status, 200, r.text.slice(0, 500));
  const d = r.body.data;
  assert.equal(d.truncated, true);
  assert.ok(d.entries.length > 0 && d.entries.length < COUNT, `${d.entries.length} entries`);
  const bytes = d.entries.reduce((n: number, e: { name: string; path: string }) => n + Buffer.byteLength(e.name) + Buffer.byteLength(e.path), 0);
  assert.ok(bytes <= MiB, `${bytes} bytes of names and paths`);
  // The first ones in order, each with its path under the listed directory.
  d.entries.forEach((e: { name: string; path: string }, i: number) => {
    assert.equal(e.name, nameOf(i));
    assert.equal(e.path, `${deep}/${nameOf(i)}`);
  });

  // A small listing is complete and says nothing about truncation.
  const small = (await t.api('GET', `/api/v1/hosts/${hostId}/directories`, { token: user.key })).body.data;
  assert.deepEqual(small.entries.map((e: { name: string }) => e.name).sort(), ['a'.repeat(200), 'proj']);
  assert.notEqual(small.truncated, true);

  // The channel never dropped, and the run finished normally on it.
  await eventually(async () => {
    const s = (await t.api('GET', `/api/v1/sessions/${sessionId}`, { token: user.key })).body.data;
    return s.status === 'active' && s.pendingRuns === 0;
  }, 20_000);
  const h = (await t.api('GET', `/api/v1/sessions/${sessionId}/messages?limit=20`, { token: user.key })).body.data;
  const items = h.items ?? h;
  assert.equal(items.at(-1).content, 'echo: slow [sleep:2500]');
  assert.ok(!items.some((m: { interrupted?: boolean }) => m.interrupted), 'the run was not interrupted');
  assert.doesNotMatch(host.output(), /disconnected/, host.output());
  assert.equal((await t.api('GET', `/api/v1/hosts/${hostId}`, { token: user.key })).body.data.status !== 'offline', true);
});
