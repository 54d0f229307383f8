// What `agent-host run` tells the person watching it: one short line per event on stdout
// (connect, run start and end, settings), and the same state in the status file for
// `agent-host status`. A prompt is printed only with --verbose; settings values never.
import type { FrameOf, HubToHost, HostToHub } from '../../host-protocol/frames.js';
import { writeStatus, type HostStatus } from './status-file.js';

type RunStart = FrameOf<HubToHost, 'run.start'>;
type RunEnd = FrameOf<HostToHub, 'run.end'>;

export interface ActivityOptions {
  hub: string;
  name: string;
  verbose: boolean;
  out: (line: string) => void;
  /** Where the state goes (the status file); replaced in tests of the module alone. */
  save?: (s: HostStatus) => void;
}

const VERBOSE_PROMPT_MAX = 200;

export class Activity {
  private readonly status: HostStatus;
  private readonly started = new Map<string, { sessionId: string; at: number }>();

  constructor(private readonly opts: ActivityOptions) {
    const now = new Date().toISOString();
    this.status = { pid: process.pid, hub: opts.hub, name: opts.name, startedAt: now, connected: false, since: now, runs: [] };
    this.save();
  }

  connected(hostId: string): void {
    Object.assign(this.status, { connected: true, hostId, since: new Date().toISOString(), lastError: undefined });
    this.save();
  }

  disconnected(why: string): void {
    Object.assign(this.status, { connected: false, since: new Date().toISOString(), lastError: why });
    this.save();
  }

  runStarted(f: RunStart): void {
    this.started.set(f.runId, { sessionId: f.sessionId, at: Date.now() });
    const prompt = this.opts.verbose ? `: ${JSON.stringify(f.prompt.length > VERBOSE_PROMPT_MAX ? f.prompt.slice(0, VERBOSE_PROMPT_MAX) + '…' : f.prompt)}` : '';
    this.opts.out(`run ${f.runId} started (session ${f.sessionId}, ${f.engine}, ${f.workDir || '.'})${prompt}`);
    this.save();
  }

  runEnded(f: RunEnd): void {
    const s = this.started.get(f.runId);
    this.started.delete(f.runId);
    const outcome = f.ok ? 'completed' : f.aborted ? 'aborted' : `failed (${f.error?.code ?? 'ENGINE_FAILED'})`;
    const took = s ? `, ${((Date.now() - s.at) / 1000).toFixed(1)}s` : '';
    this.opts.out(`run ${f.runId} ${outcome} (session ${s?.sessionId ?? '?'}${took})`);
    this.save();
  }

  settings(engine: string, result: { reverted?: boolean } | Error): void {
    if (result instanceof Error) process.stderr.write(`agent-host: settings for ${engine} not applied: ${result.message.split('\n')[0].slice(0, 300)}\n`);
    else this.opts.out(result.reverted ? `settings for ${engine} reverted to the default` : `settings for ${engine} applied`);
  }

  private save(): void {
    this.status.runs = [...this.started].map(([runId, r]) => ({ runId, sessionId: r.sessionId, startedAt: new Date(r.at).toISOString() }));
    try {
      (this.opts.save ?? writeStatus)(this.status);
    } catch (e) {
      process.stderr.write(`agent-host: cannot write the status file: ${(e as Error).message}\n`);
    }
  }
}
