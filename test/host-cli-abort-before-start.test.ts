// An abort can reach the host before its run's run.start (the hub ends a run the moment it is aborted,
// and an abort landing between a message's accept and its dispatch sends run.abort first): the host
// ignored the abort of a run it did not know, then started the engine when run.start came — an engine
// running on the owner's machine for a run already ended. It now remembers such aborts a while and
// answers that run.start with an aborted run.end, starting nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handleFrame, type HostState } from '../src/host-cli/handlers.js';
import type { Channel } from '../src/host-cli/channel.js';
import type { HostToHub } from '../host-protocol/frames.js';

const start = (runId: string) => ({ t: 'run.start' as const, runId, sessionId: 'ses_1', engine: 'claude-code', prompt: 'go', workDir: '', mode: 'default' as const });

test('a run.start whose abort came first starts no engine and ends aborted', async () => {
  const sent: HostToHub[] = [];
  const ch = { send: (f: HostToHub) => sent.push(f) } as unknown as Channel;
  // No engine binary: a started engine would end ENGINE_FAILED instead.
  const s: HostState = { workRoot: '/nonexistent-root', claudeConfigDir: '/tmp', claudeBin: '/nonexistent/claude', engines: [], runs: new Map() };
  handleFrame({ t: 'run.abort', runId: 'run_early' }, ch, s);
  handleFrame(start('run_early'), ch, s);
  await new Promise((r) => setImmediate(r)); // frames are handled in order, each after a microtask
  assert.deepEqual(sent, [{ t: 'run.end', runId: 'run_early', ok: false, aborted: true }]);
  assert.equal(s.runs.size, 0);
  // Only once: the same id again is a new dispatch of a run the hub knows (a repeat is ignored by the hub).
  handleFrame(start('run_other'), ch, s);
  await new Promise((r) => setTimeout(r, 200));
  assert.notDeepEqual(sent.at(-1), { t: 'run.end', runId: 'run_other', ok: false, aborted: true });
});
