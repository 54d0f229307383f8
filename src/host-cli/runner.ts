// Runs one turn through an engine process on the host (Claude Code headless,
// ARCHITECTURE.md §5): prompt on stdin, stream-json on stdout, normalized into
// run frames. Exactly one run.end per run, emitted after the process is gone.
import { spawn, type ChildProcess } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { FrameOf, HubToHost, HostToHub } from '../../host-protocol/frames.js';
import { ClaudeStream } from './claude-stream.js';
import { isEngineSessionId } from '../../host-protocol/engine-values.js';
import { encodeHostFrame } from '../../host-protocol/codec.js';
import { boundRunFrame } from './bounds.js';
import { ENGINE_LINE_MAX_BYTES, readEngineLines } from './engine-lines.js';
import type { EngineGroups } from './engine-groups.js';
import { guestSettings, UnconfinablePathError, type GuestSettings } from './guest-settings.js';
import { knownSecrets, redactKnown } from './known-secrets.js';
import { claudeConfigDirOf } from './settings.js';
import { homeDir } from './home.js';
import { guestEnv, guestEnvList } from './guest-env.js';

export type RunStartFrame = FrameOf<HubToHost, 'run.start'>;

export interface RunHandle {
  /** SIGINT, then SIGKILL after a short grace; the run still ends with one run.end (aborted: true). */
  abort(): void;
  /** SIGKILL at once, no grace: agent-host's own last resort before it exits. */
  kill(): void;
  /** Resolves after run.end has been emitted. */
  done: Promise<void>;
}

export interface RunOptions {
  /** The host's work root; the frame's workDir is confined under it. */
  workRoot: string;
  /** Path of the claude executable (CLAUDE_BIN or found on PATH). */
  claudeBin: string;
  /** SIGINT → SIGKILL grace on abort, ms (default 3000). */
  killGraceMs?: number;
  /** Longest line of the engine's output taken, bytes (default ENGINE_LINE_MAX_BYTES); past it the run fails. */
  lineMaxBytes?: number;
  /** Where the engine's process group is recorded while it runs, for the next agent-host should this one be killed. */
  groups?: Pick<EngineGroups, 'add' | 'remove'>;
  /** $CLAUDE_CONFIG_DIR (default ~/.claude): a guest's run gets only the model settings of its settings.json (guest-settings.ts). */
  claudeConfigDir?: string;
  /** Where a guest run's settings file lives while it runs (default: the OS temp directory). */
  runFilesDir?: string;
  /** agent-host's home ($AGENT_HOST_HOME, default ~/.agent-host): off limits to a guest's file tools, with claudeConfigDir. */
  hostHome?: string;
  /** The owner's home (default: the OS's): its well-known credential places are off limits to a guest's file tools. */
  userHome?: string;
  /** Variables of agent-host's environment a guest's engine gets beyond what an engine needs (guest-env.ts; default AGENT_HOST_GUEST_ENV). */
  guestEnv?: readonly string[];
}

/**
 * The hub's session modes → Claude Code `--permission-mode` values. Always passed, `default` too:
 * without the flag the engine starts in `permissions.defaultMode` of the owner's settings, which
 * may be above the mode the hub allowed a guest.
 */
export const PERMISSION_MODES: ReadonlyMap<string, string> = new Map([
  ['default', 'default'],
  ['accept-edits', 'acceptEdits'],
  ['auto', 'bypassPermissions'],
  ['plan', 'plan'],
]);

/** Effort → thinking budget (Claude Code has no effort flag; MAX_THINKING_TOKENS is its knob). */
export const EFFORT_THINKING_TOKENS: ReadonlyMap<string, string | null> = new Map([
  ['low', '1024'],
  ['medium', '8000'],
  ['high', '31999'],
  ['default', null],
]);

/** A run.start value outside its whitelist: the run is refused (run.end BAD_RUN), the engine never starts. */
export class BadRunError extends Error {}

/** Resolves workDir under workRoot; undefined when it escapes (.., absolute, or a symlink out). */
export function confineWorkDir(workRoot: string, workDir: string): string | undefined {
  if (isAbsolute(workDir) || workDir.split(/[\\/]/).includes('..')) return undefined;
  const root = resolve(workRoot);
  const dir = resolve(root, workDir || '.');
  const inside = (r: string, d: string) => {
    const rel = relative(r, d);
    return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
  };
  if (!inside(root, dir)) return undefined;
  try {
    if (!inside(realpathSync(root), realpathSync(dir))) return undefined;
  } catch {
    return dir; // missing directory: spawn reports it
  }
  return dir;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The engine's argv for one turn. Every value that comes from the hub is
 * whitelisted and passed as `--flag=value` (never as an argv element of its
 * own), so no value can ever be read as another option. Throws BadRunError.
 */
export function claudeArgs(frame: RunStartFrame): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'];
  if (frame.resume !== undefined) {
    if (!isEngineSessionId(frame.resume)) throw new BadRunError('resume: not an engine session id');
    args.push(flag('--resume', frame.resume));
  }
  const pm = PERMISSION_MODES.get(frame.mode);
  if (pm === undefined) throw new BadRunError(`mode ${JSON.stringify(frame.mode.slice(0, 40))} is not allowed`);
  args.push(flag('--permission-mode', pm));
  if (frame.effort !== undefined && !EFFORT_THINKING_TOKENS.has(frame.effort)) throw new BadRunError(`effort ${JSON.stringify(frame.effort.slice(0, 40))} is not allowed`);
  return args;
}

/** `--name=value`; a value starting with "-" (or empty) is refused even when a whitelist let it through. */
function flag(name: string, value: string): string {
  if (!value || value.startsWith('-')) throw new BadRunError(`${name}: value is not allowed`);
  return `${name}=${value}`;
}

/** Engines run in a process group of their own where there are groups (not on Windows). */
const GROUPS = process.platform !== 'win32';

/** Signals the engine's whole process group (the engine alone where there are none); a group already gone is fine. */
function signalEngine(child: ChildProcess, sig: NodeJS.Signals): void {
  if (!GROUPS || child.pid === undefined) return void child.kill(sig);
  try {
    process.kill(-child.pid, sig);
  } catch {
    // ESRCH: every process of the group has exited
  }
}

/**
 * Starts the engine; emits run.init / run.delta / run.message and exactly one run.end through `emit`,
 * each a frame the hub accepts (bounds.ts). Output that cannot be sent, or a throw while handling it,
 * ends this run ENGINE_FAILED (the engine is stopped first); it never escapes to the process.
 */
export function startRun(frame: RunStartFrame, opts: RunOptions, emit: (f: HostToHub, bytes?: Uint8Array) => void): RunHandle {
  const runId = frame.runId;
  const parser = new ClaudeStream(runId);
  let ended = false;
  let aborted = false;
  /** Why this run fails on the host's side (its output could not be sent); the engine is being stopped. */
  let failure: string | undefined;
  let child: ChildProcess | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  /** A guest run's settings file (removed at the end). */
  let guest: GuestSettings | undefined;
  /** The engine's environment, once built. */
  let engineEnv: NodeJS.ProcessEnv | undefined;

  const end = (f: Omit<FrameOf<HostToHub, 'run.end'>, 't' | 'runId'>) => {
    if (ended) return;
    ended = true;
    if (killTimer) clearTimeout(killTimer);
    if (GROUPS && child?.pid !== undefined) opts.groups?.remove(child.pid);
    guest?.remove();
    try {
      // Its failure text may echo a key the engine was given (a 401 quoting it): the exact values go here.
      if (f.error) f = { ...f, error: { ...f.error, message: redactKnown(f.error.message, knownSecrets(engineEnv ?? process.env, opts.claudeConfigDir ?? claudeConfigDirOf())) } };
      const [out] = boundRunFrame({ t: 'run.end', runId, ...f });
      const { bytes, error: refused } = encodeHostFrame(out);
      if (refused === undefined) emit(out, bytes);
      else emit({ t: 'run.end', runId, ok: false, error: { code: 'ENGINE_FAILED', message: `the run's end could not be sent: ${refused}`.slice(0, 4000) } });
    } catch (e) {
      process.stderr.write(`agent-host: run ${runId}: sending its end failed: ${(e as Error).message}\n`);
    } finally {
      resolveDone();
    }
  };
  /** Stops the engine and what it started: SIGINT to its group, then SIGKILL after the grace. */
  const stop = () => {
    signalEngine(child!, 'SIGINT');
    killTimer = setTimeout(() => {
      if (child!.exitCode === null && child!.signalCode === null) signalEngine(child!, 'SIGKILL');
    }, opts.killGraceMs ?? 3000);
    killTimer.unref?.();
  };
  /** Ends the run ENGINE_FAILED once the engine is gone; nothing more of its output is sent. */
  const fail = (why: string) => {
    if (ended || failure !== undefined) return;
    failure = why.slice(0, 4000);
    if (!aborted) stop();
  };
  /** Each frame bounded, then judged as the hub will judge it: a frame it would refuse fails this run only. */
  const send = (f: HostToHub) => {
    for (const out of boundRunFrame(f)) {
      if (ended || failure !== undefined) return;
      const { bytes, error: refused } = encodeHostFrame(out);
      if (refused !== undefined) return fail(`the engine's output could not be sent (${out.t}): ${refused}`);
      emit(out, bytes); // the bytes judged are the bytes sent: one encoding per frame
    }
  };

  const cwd = confineWorkDir(opts.workRoot, frame.workDir);
  const why = !cwd ? 'workDir escapes the work root' : !isDir(cwd) ? `workDir ${JSON.stringify(frame.workDir)} does not exist on this host` : undefined;
  if (why) {
    queueMicrotask(() => end({ ok: false, error: { code: 'BAD_WORKDIR', message: why } }));
    return { abort() {}, kill() {}, done };
  }

  let argv: string[];
  try {
    argv = claudeArgs(frame);
  } catch (e) {
    if (!(e instanceof BadRunError)) throw e;
    queueMicrotask(() => end({ ok: false, error: { code: 'BAD_RUN', message: `refused: ${e.message}` } }));
    return { abort() {}, kill() {}, done };
  }
  // A guest's run: none of the owner's own engine settings (guest-settings.ts).
  if (frame.guest === true) {
    try {
      const configDir = opts.claudeConfigDir ?? claudeConfigDirOf();
      guest = guestSettings(runId, configDir, opts.runFilesDir ?? join(tmpdir(), 'agent-host-runs'), { privateDirs: [opts.hostHome ?? homeDir()], workDir: cwd!, userHome: opts.userHome ?? homedir() });
    } catch (e) {
      const unconfined = e instanceof UnconfinablePathError;
      const error = { code: unconfined ? 'BAD_WORKDIR' : 'ENGINE_UNAVAILABLE', message: `${unconfined ? 'refused' : "the guest run's settings could not be written"}: ${(e as Error).message}`.slice(0, 4000) };
      queueMicrotask(() => end({ ok: false, error }));
      return { abort() {}, kill() {}, done };
    }
    argv.push(...guest.args);
  }
  const env: NodeJS.ProcessEnv = engineEnv = frame.guest === true ? guestEnv(process.env, opts.guestEnv ?? guestEnvList(process.env.AGENT_HOST_GUEST_ENV)) : { ...process.env };
  const thinking = frame.effort ? EFFORT_THINKING_TOKENS.get(frame.effort) : undefined;
  if (thinking) env.MAX_THINKING_TOKENS = thinking;
  let stderrTail = '';
  try {
    // A process group of its own (detached), so a stop reaches the tools' processes too.
    child = spawn(opts.claudeBin, argv, { cwd: cwd!, env, stdio: ['pipe', 'pipe', 'pipe'], detached: GROUPS });
  } catch (e) {
    queueMicrotask(() => end({ ok: false, error: { code: 'ENGINE_UNAVAILABLE', message: (e as Error).message } }));
    return { abort() {}, kill() {}, done };
  }
  if (GROUPS && child.pid !== undefined) opts.groups?.add(child.pid);
  child.on('error', (e) => {
    // Spawn failure (ENOENT, EACCES, bad cwd): no 'close' may follow.
    end({ ok: false, aborted: aborted || undefined, error: { code: 'ENGINE_UNAVAILABLE', message: e.message.slice(0, 4000) } });
  });
  child.stdin!.on('error', () => {}); // the engine may exit before reading everything
  child.stdin!.end(frame.prompt);
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (s: string) => {
    stderrTail = (stderrTail + s).slice(-2000);
  });
  const lineMax = opts.lineMaxBytes ?? ENGINE_LINE_MAX_BYTES;
  readEngineLines(child.stdout!, {
    line(l) {
      if (ended || failure !== undefined) return;
      try {
        for (const f of parser.line(l)) send(f);
      } catch (e) {
        fail(`handling the engine's output failed: ${(e as Error).message}`);
      }
    },
    tooLong: (bytes) => fail(`the engine printed a line of ${bytes} bytes, over ${lineMax} bytes`),
  }, lineMax);
  // A tool subprocess that inherited stdout can keep 'close' from firing: after exit, wait briefly.
  child.on('exit', () => {
    setTimeout(() => child!.emit('close', child!.exitCode, child!.signalCode), 2000).unref?.();
  });
  // 'close' fires after the process exited AND its stdio closed: every line is parsed by then.
  child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
    if (ended) return;
    // A run is over only when nothing it started runs on, however it ended: the group's survivors
    // (a tool's `cmd &` in a turn that completed, those that outlived SIGINT, a grace cut short by the
    // engine's exit) get SIGKILL, which they cannot ignore. Left running, what a stranger's turn
    // started outlived its run.end, the agent's deletion and the capacity the owner set.
    signalEngine(child!, 'SIGKILL');
    const r = parser.result;
    const common = { usage: parser.usage(), engineSessionId: parser.engineSessionId, model: parser.model };
    if (aborted) return end({ ok: false, aborted: true, ...common });
    if (failure !== undefined) return end({ ok: false, ...common, error: { code: 'ENGINE_FAILED', message: failure } });
    if (r && !r.isError && code === 0) return end({ ok: true, ...common });
    const message = r?.isError
      ? r.message || `engine reported ${r.subtype || 'an error'}`
      : `engine exited with ${signal ? `signal ${signal}` : `code ${code}`}${stderrTail.trim() ? `: ${stderrTail.trim().slice(-1000)}` : ''}`;
    end({ ok: false, ...common, error: { code: 'ENGINE_FAILED', message: message.slice(0, 4000) } });
  });

  return {
    abort() {
      if (ended || aborted || !child) return;
      aborted = true;
      if (failure === undefined) stop();
    },
    kill() {
      if (!ended && child) signalEngine(child, 'SIGKILL');
    },
    done,
  };
}
