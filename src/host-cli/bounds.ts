// Run frames → frames the hub accepts. What an engine prints is steered by whoever wrote the
// prompt, a guest's included, and the hub closes a host's channel on one frame past its bounds
// (host-protocol/limits.ts), ending every run on the host. So each run frame is clamped here,
// the one place for the rule: long strings are cut with a mark, a tool payload too deep, too
// wide or too large becomes a (cut) JSON string, a long delta and a message of too many blocks
// or bytes are split. Pure; the runner checks each result once more before sending it.
import type { Block, FrameOf, HostToHub } from '../../host-protocol/frames.js';
import { ARRAY_MAX_ITEMS, BLOCKS_MAX, DEPTH_MAX, ERROR_MAX_CHARS, FRAME_MAX_BYTES, MAP_MAX_KEYS, NAME_MAX_CHARS, STR_MAX_BYTES } from '../../host-protocol/limits.js';

/** Most UTF-8 bytes of one string or one tool payload: the decoder's string limit, less room for the mark. */
export const PAYLOAD_MAX_BYTES = STR_MAX_BYTES - 1024;
/** How deep a tool payload may nest: the frame's own levels (frame, blocks, block, toolResult, content) come on top. */
const PAYLOAD_DEPTH_MAX = DEPTH_MAX - 10;
/** A run.message is split before this many (estimated) bytes: room under the frame limit for its own fields. */
const MESSAGE_MAX_BYTES = FRAME_MAX_BYTES - 64 * 1024;
export const ERROR_CODE_MAX_CHARS = 40;

const utf8 = new TextEncoder();

/** `s` cut to at most `maxBytes` UTF-8 bytes (whole characters), with a mark saying how long it was. */
export function cutBytes(s: string, maxBytes = PAYLOAD_MAX_BYTES): string {
  // UTF-8 never takes more than 3 bytes per UTF-16 unit: most strings skip the count.
  if (s.length * 3 <= maxBytes) return s;
  const total = Buffer.byteLength(s);
  if (total <= maxBytes) return s;
  const { read } = utf8.encodeInto(s, new Uint8Array(maxBytes));
  return `${s.slice(0, read)}… [truncated by agent-host: ${total} bytes]`;
}

/** `s` cut to at most `max` UTF-16 units, never between the halves of a surrogate pair. */
export function cutChars(s: string, max: number): string {
  if (s.length <= max) return s;
  const end = /[\ud800-\udbff]/.test(s[max - 1]) ? max - 1 : max;
  return s.slice(0, end);
}

/** What `measure` holds a value to: a tool payload to the decoder's bounds; a bounded block to none. */
interface Bounds {
  depth: number;
  strBytes: number;
}
const PAYLOAD: Bounds = { depth: PAYLOAD_DEPTH_MAX, strBytes: PAYLOAD_MAX_BYTES };
const SIZE_ONLY: Bounds = { depth: Infinity, strBytes: Infinity };

/**
 * Upper bound of a JSON value's MessagePack size, or Infinity when it breaks `b` or the hub's
 * decoder limits (keys, items) or goes over `budget`. Stops at the first break.
 */
function measure(v: unknown, depth: number, budget: number, b: Bounds): number {
  if (typeof v === 'string') {
    const n = v.length < 256 ? v.length * 3 : Buffer.byteLength(v);
    return n > b.strBytes ? Infinity : n + 5;
  }
  if (v === null || typeof v !== 'object') return 9;
  if (depth >= b.depth) return Infinity;
  let size = 5;
  if (Array.isArray(v)) {
    if (v.length > ARRAY_MAX_ITEMS) return Infinity;
    for (const x of v) if ((size += measure(x, depth + 1, budget - size, b)) > budget) return Infinity;
    return size;
  }
  const keys = Object.keys(v);
  if (keys.length > MAP_MAX_KEYS) return Infinity;
  for (const k of keys) if ((size += measure(k, depth + 1, budget, b) + measure((v as Record<string, unknown>)[k], depth + 1, budget - size, b)) > budget) return Infinity;
  return size;
}

/** A tool's input or result as the engine printed it, or, past a bound, as a JSON string cut to fit. */
export function boundPayload(v: unknown): unknown {
  if (typeof v === 'string') return cutBytes(v);
  if (measure(v, 0, PAYLOAD_MAX_BYTES, PAYLOAD) <= PAYLOAD_MAX_BYTES) return v;
  let json: string;
  try {
    json = JSON.stringify(v) ?? 'null';
  } catch {
    return '[too deep to serialise; dropped by agent-host]'; // the stack ran out
  }
  return cutBytes(json);
}

function boundBlock(b: Block): Block {
  const out: Block = { ...b };
  if (b.content !== undefined) out.content = cutBytes(b.content);
  if (b.toolName !== undefined) out.toolName = cutChars(b.toolName, NAME_MAX_CHARS);
  if (b.toolId !== undefined) out.toolId = cutChars(b.toolId, NAME_MAX_CHARS);
  if (b.toolInput !== undefined) out.toolInput = boundPayload(b.toolInput);
  if (b.toolResult !== undefined) out.toolResult = { content: boundPayload(b.toolResult.content), isError: b.toolResult.isError === true };
  return out;
}

/** Blocks in order, in as many messages as the block count and the frame limit need. */
function splitMessage(f: FrameOf<HostToHub, 'run.message'>): HostToHub[] {
  const out: HostToHub[] = [];
  let blocks: Block[] = [];
  let bytes = 0;
  for (const b of f.blocks.map(boundBlock)) {
    const size = measure(b, 0, Infinity, SIZE_ONLY);
    if (blocks.length && (blocks.length === BLOCKS_MAX || bytes + size > MESSAGE_MAX_BYTES)) {
      out.push({ ...f, blocks });
      blocks = [];
      bytes = 0;
    }
    blocks.push(b);
    bytes += size;
  }
  if (blocks.length) out.push({ ...f, blocks });
  return out;
}

/** A delta's text in pieces of at most PAYLOAD_MAX_BYTES (nothing is lost: the pieces join to the text). */
function splitDelta(f: FrameOf<HostToHub, 'run.delta'>): HostToHub[] {
  if (f.text.length * 3 <= PAYLOAD_MAX_BYTES) return [f];
  const out: HostToHub[] = [];
  const buf = new Uint8Array(PAYLOAD_MAX_BYTES);
  for (let rest = f.text; rest; ) {
    const { read } = utf8.encodeInto(rest, buf);
    out.push({ ...f, text: rest.slice(0, read) });
    rest = rest.slice(read);
  }
  return out;
}

const name = (s: string | undefined) => (s === undefined ? undefined : cutChars(s, NAME_MAX_CHARS));

/** One run frame as the frames the hub accepts (usually the same one). */
export function boundRunFrame(f: HostToHub): HostToHub[] {
  switch (f.t) {
    case 'run.init':
      return [withNames(f)];
    case 'run.delta':
      return splitDelta(f);
    case 'run.message':
      return splitMessage(f);
    case 'run.end': {
      const end = withNames(f);
      if (f.error) end.error = { code: cutChars(f.error.code, ERROR_CODE_MAX_CHARS), message: cutChars(f.error.message, ERROR_MAX_CHARS) };
      return [end];
    }
    default:
      return [f];
  }
}

function withNames<F extends { engineSessionId?: string; model?: string }>(f: F): F {
  const out = { ...f };
  if (f.engineSessionId !== undefined) out.engineSessionId = name(f.engineSessionId);
  if (f.model !== undefined) out.model = name(f.model);
  return out;
}
