// Values that travel between hub and host and end up on an engine's command
// line. One rule each, used on both sides: the hub checks before it stores or
// sends, the host checks again before argv (issue 10, hole 3).

/** Claude Code's session ids are UUIDs (8-4-4-4-12 hex). Nothing else is ever passed to `--resume`. */
const ENGINE_SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isEngineSessionId(v: unknown): boolean {
  return typeof v === 'string' && ENGINE_SESSION_ID.test(v);
}
