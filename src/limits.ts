// Every memory and rate bound the hub keeps per run, per session and per host
// channel, in one place. A host is untrusted: whatever it streams is held only
// up to these bounds (issue 10, hole 4). The three that operators may tune come
// from the configuration (HOST_FRAMES_PER_SECOND, RUN_OUTPUT_MAX_BYTES, RUN_STORED_MAX_BYTES).
import type { Config } from './config.js';

const MiB = 1024 * 1024;

export interface Limits {
  /** A run's streamed text not yet covered by a complete message, plus rows not yet written: over it the run ends (OUTPUT_TOO_LARGE). */
  runOutputBytes: number;
  /**
   * What a run stores in all (its messages' bytes, counted as they come and never decreasing): the held
   * bound above drops at each mid-run write, so a host pacing complete messages stored any amount.
   */
  runStoredBytes: number;
  /** The same, for all of one host's runs on a node together: the run that would pass it ends (OUTPUT_TOO_LARGE). */
  hostOutputBytes: number;
  /** Frames held for a run while it is loaded from the database (it was dispatched by another node). */
  runBacklogBytes: number;
  /** Frames a channel holds while its runs are looked up after hello; over it the channel is closed (FRAME_RATE). */
  channelHeldBytes: number;
  /** A session's replay ring (events kept for Last-Event-ID resumes). */
  ringBytes: number;
  /** Host channel token bucket: refill per second and burst. */
  hostFramesPerSecond: number;
  hostFrameBurst: number;
}

/** The fixed parts; `limitsOf` adds what the configuration sets. */
/** A session's replay ring: frames held, in UTF-8 bytes (its byte store, grown by doubling, is at most twice this). */
export const RING_MAX_BYTES = 4 * MiB;
/**
 * All of a node's replay rings together: their byte stores and index arrays. Finished turns' rings
 * (kept RING_KEEP_MS for late resumers) go first, oldest first; then a growing live ring gives up its
 * older events. Each ring is bounded, but a host whose runs stream megabytes and end, session after
 * session, made a node keep that many megabytes per session for a minute.
 */
export const RINGS_MAX_BYTES = 128 * MiB;
export const RUN_BACKLOG_MAX_BYTES = 8 * MiB;
export const CHANNEL_HELD_MAX_BYTES = 8 * MiB;
/**
 * Run ends written by one hub_end_runs call: their rows and streamed text add up to at most this
 * (a single larger end goes alone). Each end is bounded by RUN_OUTPUT_MAX_BYTES, but 64 of them
 * arriving together would otherwise make one statement of up to a gigabyte: a long stall of the
 * event loop serialising it and of PostgreSQL parsing it.
 */
export const RUN_END_BATCH_MAX_BYTES = 1 * MiB;
/**
 * Message accepts written by one hub_accept call: their contents, counted at 6 bytes a character (the
 * most one takes as JSON), add up to at most this (a single larger message goes alone). 64 messages
 * of 100,000 characters would otherwise be one statement of up to 38 MB of JSON.
 */
export const ACCEPT_BATCH_MAX_BYTES = 4 * MiB;
/**
 * A page of a session's history holds rows of at most this much content (text, tool input and result,
 * as stored), one row at least: a host may store rows of about a megabyte each, and 50 of them made one
 * answer of 50 MB that the node read and built whole. A shorter page says hasMore; its cursor goes on.
 */
export const HISTORY_PAGE_MAX_BYTES = 4 * MiB;

/**
 * A host's runs together hold at most this many runs' worth of output (`hostOutputBytes`): each run is
 * bounded, but a host chooses its capacity and may keep many runs open, streaming, at once.
 */
export const HOST_OUTPUT_RUNS = 8;
/** A run holding more than this (or than its own bound, if less) is checked against its host's bound too. */
export const HOST_CHECK_FROM_BYTES = 64 * 1024;

export function limitsOf(config: Pick<Config, 'hostFramesPerSecond' | 'runOutputMaxBytes'> & Partial<Pick<Config, 'runStoredMaxBytes'>>): Limits {
  return {
    runOutputBytes: config.runOutputMaxBytes,
    runStoredBytes: Math.max(config.runOutputMaxBytes, config.runStoredMaxBytes ?? 64 * MiB),
    hostOutputBytes: HOST_OUTPUT_RUNS * config.runOutputMaxBytes,
    runBacklogBytes: RUN_BACKLOG_MAX_BYTES,
    channelHeldBytes: CHANNEL_HELD_MAX_BYTES,
    ringBytes: RING_MAX_BYTES,
    hostFramesPerSecond: config.hostFramesPerSecond,
    hostFrameBurst: config.hostFramesPerSecond * 2,
  };
}

/** A token bucket (frames per second with a burst): `take` answers false when the caller is over its rate. */
export class TokenBucket {
  private tokens: number;
  private at = Date.now();
  constructor(private readonly perSecond: number, private readonly burst: number) {
    this.tokens = burst;
  }
  take(now = Date.now()): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perSecond) / 1000);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Characters of the tool ids and names of a message's `tool_use` blocks: what a run keeps of them for its whole life. */
export function toolUseBytes(blocks: ReadonlyArray<{ kind: string; toolId?: string; toolName?: string }>): number {
  let n = 0;
  for (const b of blocks) if (b.kind === 'tool_use') n += (b.toolId?.length ?? 0) + (b.toolName?.length ?? 0);
  return n;
}

/** Bytes a run frame adds to what the hub holds for its run (text, tool payloads, ids and names; the rest is small and fixed). */
export function frameBytes(f: { t: string; text?: string; blocks?: Array<{ content?: string; toolInput?: unknown; toolResult?: unknown; toolId?: string; toolName?: string }> }): number {
  if (f.t === 'run.delta') return Buffer.byteLength(f.text ?? '');
  if (f.t !== 'run.message' || !f.blocks) return 64;
  let n = 64;
  for (const b of f.blocks) {
    if (b.content) n += Buffer.byteLength(b.content);
    // A tool's id and name are kept too (stored, and held by the run for its whole life: toolBytes).
    if (b.toolId) n += b.toolId.length;
    if (b.toolName) n += b.toolName.length;
    if (b.toolInput !== undefined) n += Buffer.byteLength(JSON.stringify(b.toolInput) ?? '');
    if (b.toolResult !== undefined) n += Buffer.byteLength(JSON.stringify(b.toolResult) ?? '');
  }
  return n;
}
