// Retries a write that must land (a run's end): with backoff, until it
// succeeds or the caller stops (the node shuts down; another node's sweep
// ends the run then). A session never stays `processing` because one write
// failed on a dropped connection or a brief database outage.
import type { Logger } from '../log.js';

export interface RetryOptions {
  /** First delay, doubled after each failure up to `maxMs`. */
  baseMs?: number;
  maxMs?: number;
  /** Answers true once retrying should stop (the last error is thrown then). */
  stopped?: () => boolean;
  log?: Logger;
  /** What is being written, for the log. */
  what?: string;
  fields?: Record<string, unknown>;
}

export const RETRY_BASE_MS = 100;
export const RETRY_MAX_MS = 10_000;

export async function retryUntilDone<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const base = opts.baseMs ?? RETRY_BASE_MS;
  const max = opts.maxMs ?? RETRY_MAX_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (opts.stopped?.()) throw e;
      const delay = Math.min(max, base * 2 ** Math.min(attempt, 20));
      // Jitter, so nodes retrying after one outage do not all come back at once.
      const wait = Math.round(delay * (0.5 + Math.random() / 2));
      opts.log?.warn(`${opts.what ?? 'write'} failed; retrying`, { ...opts.fields, attempt: attempt + 1, inMs: wait, err: e });
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
