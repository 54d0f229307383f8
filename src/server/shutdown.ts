// A node's graceful stop. In order: read as draining (health answers 503 so
// the balancer looks elsewhere), stop accepting connections, tell hosts to
// reconnect to another node (their runs go on there: the host reports them in
// its next hello), end SSE streams with a final frame (results stay readable
// through the messages endpoint), then wait, bounded, for requests still in a
// handler so that an accepted message is committed before the database closes.
import type { EventStream } from './sse.js';

/** The last frame of a stream cut by a shutdown: the run itself goes on elsewhere. */
export const SHUTDOWN_EVENT = 'shutdown';

export interface DrainSteps {
  stopAccepting(): void;
  /** Closes host channels with the GOING_AWAY close code. */
  goAway(): Promise<void> | void;
  inFlight(): number;
  /** Longest wait for in-flight requests, ms. */
  graceMs: number;
}

export class Drain {
  private streams = new Set<EventStream>();
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  /** Registered as the wrapper's `streamOpened` hook. */
  track(s: EventStream): void {
    if (this.started) return this.finish(s);
    this.streams.add(s);
    s.onClose(() => this.streams.delete(s));
  }

  async run(steps: DrainSteps): Promise<void> {
    if (this.started) return;
    this.started = true;
    steps.stopAccepting();
    await steps.goAway();
    for (const s of [...this.streams]) this.finish(s);
    this.streams.clear();
    const until = Date.now() + steps.graceMs;
    while (steps.inFlight() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  }

  private finish(s: EventStream): void {
    s.send(SHUTDOWN_EVENT, { reason: 'hub node shutting down', reconnect: true });
    s.end();
  }
}
