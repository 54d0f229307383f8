// Runs one turn through an engine process on the host. OWNED BY the sessions work (issue 4).
// Contract used by the CLI's connection (hosts work, issue 3):
import type { FrameOf, HubToHost, HostToHub } from '../../host-protocol/frames.js';

export type RunStartFrame = FrameOf<HubToHost, 'run.start'>;

export interface RunHandle {
  /** SIGINT, then SIGKILL after a short grace; the run still ends with one run.end (aborted: true). */
  abort(): void;
  /** Resolves after run.end has been emitted. */
  done: Promise<void>;
}

export interface RunOptions {
  /** The host's work root; the frame's workDir is confined under it. */
  workRoot: string;
  /** Path of the claude executable (CLAUDE_BIN or found on PATH). */
  claudeBin: string;
}

/** Starts the engine; emits run.init / run.delta / run.message and exactly one run.end through `emit`. */
export function startRun(frame: RunStartFrame, opts: RunOptions, emit: (f: HostToHub) => void): RunHandle {
  void frame; void opts; void emit;
  throw new Error('runner not implemented yet (issue 4)');
}
