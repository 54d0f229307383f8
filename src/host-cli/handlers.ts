// What the host does with each frame from the hub: one handler per type.
// Runs go to the runner, settings to the settings writer, directory listings
// to dirs.ts, connectivity tests to the shared probe; every request is answered with a `reply` carrying its id.
import type { FrameOf, HubToHost, HostToHub, Engine } from '../../host-protocol/frames.js';
import { ReplyCodes } from '../../host-protocol/frames.js';
import type { Channel } from './channel.js';
import { startRun, type RunHandle } from './runner.js';
import { applySettings } from './settings.js';
import { listDirs, DirsError } from './dirs.js';
import { detectEngines } from './engines.js';
import { probe } from '../model-probe/index.js';
import type { Activity } from './activity.js';
import type { EngineGroups } from './engine-groups.js';

export interface HostState {
  workRoot: string;
  claudeConfigDir: string;
  claudeBin: string | undefined;
  engines: Engine[];
  runs: Map<string, RunHandle>;
  /** Engines at once (`--capacity`): agent-host holds the owner's bound itself, whatever the hub sends. */
  capacity?: number;
  /** Prints and records what happens (main.ts); absent in tests that drive handlers alone. */
  activity?: Activity;
  /** Where engines' process groups are recorded (main.ts); absent in tests that drive handlers alone. */
  groups?: EngineGroups;
  /** Set on SIGINT/SIGTERM: new runs are refused while the running ones end. */
  stopping?: boolean;
  /** Where a guest run's settings file lives while it runs (main.ts: $AGENT_HOST_HOME/runs). */
  runFilesDir?: string;
  /** Runs aborted before their run.start came (ids, oldest first): that run.start starts nothing. */
  abortedEarly?: Set<string>;
}

/** Aborts of unknown runs remembered: a run.start follows its abort within a moment, if at all. */
const ABORTED_EARLY_MAX = 1000;

type Handler<T extends HubToHost['t']> = (f: FrameOf<HubToHost, T>, ch: Channel, s: HostState) => void | Promise<void>;

const runStart: Handler<'run.start'> = (f, ch, s) => {
  if (s.runs.has(f.runId)) return; // a repeated dispatch of a run already going
  const emit = (out: HostToHub, bytes?: Uint8Array) => {
    if (out.t === 'run.end') s.activity?.runEnded(out);
    ch.send(out, bytes);
  };
  // Aborted before it came (the hub ended it at the abort): no engine for a run already over.
  if (s.abortedEarly?.delete(f.runId)) return emit({ t: 'run.end', runId: f.runId, ok: false, aborted: true });
  const fail = (code: string, message: string) => emit({ t: 'run.end', runId: f.runId, ok: false, error: { code, message } });
  s.activity?.runStarted(f);
  if (s.stopping) return fail('ENGINE_UNAVAILABLE', 'the host is shutting down');
  // The hub counts slots too; a hub that miscounts (or lies) must not run more engines than the owner allowed.
  if (s.capacity !== undefined && s.runs.size >= s.capacity) return fail('HOST_AT_CAPACITY', `the host already runs ${s.runs.size} of its capacity of ${s.capacity}`);
  if (f.engine !== 'claude-code' || !s.claudeBin) return fail('ENGINE_UNAVAILABLE', `engine ${f.engine} is not available on this host`);
  let handle: RunHandle;
  try {
    handle = startRun(f, { workRoot: s.workRoot, claudeBin: s.claudeBin, groups: s.groups, claudeConfigDir: s.claudeConfigDir, runFilesDir: s.runFilesDir }, emit);
  } catch (e) {
    return fail('ENGINE_FAILED', (e as Error).message);
  }
  s.runs.set(f.runId, handle);
  void handle.done.finally(() => s.runs.delete(f.runId));
};

/** With `id`, the hub waits for the engine to be gone (agent deletion): reply once the run has ended. */
const runAbort: Handler<'run.abort'> = async (f, ch, s) => {
  const h = s.runs.get(f.runId);
  h?.abort();
  if (!h) {
    const early = (s.abortedEarly ??= new Set());
    if (early.size >= ABORTED_EARLY_MAX) early.delete(early.values().next().value as string);
    early.add(f.runId);
  }
  if (f.id === undefined) return;
  await h?.done; // resolves after run.end, which is sent only once the process has exited
  ch.send({ t: 'reply', id: f.id, ok: true });
};

const settingsApply: Handler<'settings.apply'> = async (f, ch, s) => {
  try {
    const data = await applySettings(f.engine, f.config, { claudeConfigDir: s.claudeConfigDir });
    s.activity?.settings(f.engine, data);
    ch.send({ t: 'reply', id: f.id, ok: true, data });
  } catch (e) {
    s.activity?.settings(f.engine, e as Error);
    ch.send({ t: 'reply', id: f.id, ok: false, code: ReplyCodes.FAILED, error: (e as Error).message.slice(0, 4000) });
  }
};

const dirsList: Handler<'dirs.list'> = async (f, ch, s) => {
  try {
    ch.send({ t: 'reply', id: f.id, ok: true, data: await listDirs(s.workRoot, f.path) });
  } catch (e) {
    ch.send({ t: 'reply', id: f.id, ok: false, code: e instanceof DirsError ? e.code : ReplyCodes.FAILED, error: (e as Error).message.slice(0, 4000) });
  }
};

const enginesRefresh: Handler<'engines.refresh'> = async (f, ch, s) => {
  const d = await detectEngines();
  s.engines = d.engines;
  s.claudeBin = d.claudeBin;
  ch.send({ t: 'reply', id: f.id, ok: true, data: { engines: d.engines } });
};

/**
 * The owner's connectivity test from this machine. Its loopback and private network are the
 * owner's own (a local model proxy is the point), so they are allowed; metadata never is.
 * The key arrives in the frame only and is neither kept nor printed.
 */
const modelTest: Handler<'model.test'> = async (f, ch) => {
  const data = await probe(
    { apiType: f.apiType, baseUrl: f.baseUrl, apiKey: f.apiKey, modelName: f.modelName },
    { timeoutMs: f.timeoutMs, egress: { allowPrivate: true } },
  );
  ch.send({ t: 'reply', id: f.id, ok: true, data });
};

const HANDLERS: { [T in HubToHost['t']]?: Handler<T> } = {
  'run.start': runStart,
  'run.abort': runAbort,
  'settings.apply': settingsApply,
  'dirs.list': dirsList,
  'engines.refresh': enginesRefresh,
  'model.test': modelTest,
};

export function handleFrame(f: HubToHost, ch: Channel, s: HostState): void {
  const h = HANDLERS[f.t] as Handler<typeof f.t> | undefined;
  if (!h) return;
  Promise.resolve()
    .then(() => h(f as never, ch, s))
    .catch((e) => process.stderr.write(`agent-host: ${f.t} failed: ${(e as Error).message}\n`));
}
