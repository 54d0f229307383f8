// The text of an engine's failure comes from the owner's machine and reaches
// whoever runs the agent, possibly a stranger.
import { scrubSecrets } from '../log.js';
import type { RunEnd } from './run-batch.js';

/** Longest engine failure text kept or shown. */
const FAILURE_TEXT_MAX = 500;

/**
 * The engine's failure as the hub passes it on: the host's text (an engine's stderr may echo the
 * key it was given) bounded and scrubbed, once, for the event a stranger using the agent reads,
 * the row kept and the log line alike.
 */
export function engineFailure(end: RunEnd): { code: string; message: string } {
  return { code: end.error?.code ?? 'ENGINE_FAILED', message: scrubSecrets((end.error?.message ?? 'the engine failed').slice(0, FAILURE_TEXT_MAX)) };
}
