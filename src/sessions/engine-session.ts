// The engine session id a host reports (run.init / run.end) is stored and sent
// back as `resume` on the next turn, which puts it on the engine's argv: only
// the engine's own id format is kept (host-protocol/engine-values.ts holds the
// rule). Anything else is dropped, and logged at most once a minute per node
// so a hostile host cannot flood the log.
import { isEngineSessionId } from '../../host-protocol/engine-values.js';
import type { Logger } from '../log.js';

const LOG_EVERY_MS = 60_000;
let lastLog = 0;
let dropped = 0;

/** The id when it is a valid engine session id; undefined (dropped) otherwise. */
export function engineSessionIdOf(v: string | undefined, log: Logger, runId: string): string | undefined {
  if (v === undefined || isEngineSessionId(v)) return v;
  dropped++;
  const now = Date.now();
  if (now - lastLog >= LOG_EVERY_MS) {
    lastLog = now;
    log.warn('host reported an invalid engine session id: dropped', { runId, dropped, sample: JSON.stringify(v.slice(0, 40)) });
    dropped = 0;
  }
  return undefined;
}
