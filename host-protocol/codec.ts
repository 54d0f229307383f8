// MessagePack encode/decode with schema checks. decode never throws on bad
// bytes: it returns { error } so a transport can close with BAD_FRAME.
import { Encoder } from '@msgpack/msgpack';
import { nativeStringDecoder } from './native-strings.js';
import { decodeFlatStringMap } from './flat-map.js';
import { Compile } from 'typebox/compile';
import { HostToHub, HubToHost } from './frames.js';
import { ARRAY_MAX_ITEMS, DEPTH_MAX, FRAME_MAX_BYTES, MAP_MAX_KEYS, STR_MAX_BYTES } from './limits.js';

const checkHostToHub = Compile(HostToHub);
const checkHubToHost = Compile(HubToHost);
/**
 * One decoder and one encoder for every frame: msgpack's `decode()` and `encode()` build a
 * Decoder (and its key cache) or an Encoder (and a 2 KB buffer) per call, which at thousands
 * of deltas a second is most of a frame's garbage (strings: native-strings.ts). Both are reentrant (they clone themselves
 * when entered twice); the encoder's buffer grows to the largest frame sent and stays.
 */
const encoder = new Encoder({ ignoreUndefined: true, maxDepth: DEPTH_MAX });
const decoder = nativeStringDecoder({ maxStrLength: STR_MAX_BYTES, maxArrayLength: ARRAY_MAX_ITEMS, maxMapLength: MAP_MAX_KEYS, maxBinLength: STR_MAX_BYTES, maxExtLength: 0 });

export type Decoded<T> = { frame: T; error?: undefined } | { frame?: undefined; error: string };

export function encodeFrame(frame: HostToHub | HubToHost): Uint8Array {
  return encoder.encode(frame);
}

/**
 * One pass over a decoded frame, in place: refuses nesting past DEPTH_MAX (the error, either
 * direction) and, with `repair` (a host's frames, read by the hub), makes every string and key one
 * PostgreSQL takes. U+0000 becomes U+FFFD: PostgreSQL refuses NUL in text and JSON, so a host's text
 * holding one (a tool result read from a binary file, or a hostile host) made its run's rows and end
 * unwritable. A key the library decoded as a lone surrogate (its lenient key decoder reads CESU-8)
 * becomes well-formed: PostgreSQL's JSON refuses `"\ud800"`, and a hello holding one failed the write
 * of every host in its batch. Values are decoded by Node's UTF-8 decoder (native-strings.ts): invalid
 * bytes are U+FFFD already.
 */
function walkFrame(root: object, repair: boolean): string | undefined {
  const stack: object[] = [root];
  const depths: number[] = [1];
  for (let o = stack.pop(), depth = depths.pop()!; o; o = stack.pop(), depth = depths.pop()!) {
    if (o instanceof Uint8Array) continue;
    if (depth > DEPTH_MAX) return `frame nested deeper than ${DEPTH_MAX} levels`;
    const rec = o as Record<string, unknown>;
    for (const k of Object.keys(rec)) {
      let v = rec[k];
      if (v !== null && typeof v === 'object') {
        stack.push(v);
        depths.push(depth + 1);
      } else if (repair && typeof v === 'string' && v.includes('\u0000')) rec[k] = v = v.replaceAll('\u0000', '\ufffd');
      if (repair && (k.includes('\u0000') || !k.isWellFormed())) {
        delete rec[k];
        rec[k.replaceAll('\u0000', '\ufffd').toWellFormed()] = v;
      }
    }
  }
  return undefined;
}

function decodeWith<T>(bytes: ArrayBuffer | Uint8Array, check: { Check(v: unknown): boolean }, scrub = false): Decoded<T> {
  let value: unknown;
  let plain = false;
  try {
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    // run.delta and the like (a map of strings) without the library; anything else, and every error, with it.
    const flat = decodeFlatStringMap(u8, STR_MAX_BYTES);
    // Such a map's strings all come from Node's UTF-8 decoder, which reads only the byte 0x00 as U+0000
    // (an overlong form is U+FFFD): without that byte the frame holds no NUL, and the walk is skipped.
    // The library's own decoder reads short keys leniently (C0 80 is U+0000), so its frames are walked.
    plain = flat !== undefined && u8.indexOf(0) === -1;
    value = flat ?? decoder.decode(u8);
  } catch (e) {
    return { error: `not MessagePack: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'frame must be a map' };
  if (!plain) {
    const bad = walkFrame(value, scrub);
    if (bad) return { error: bad };
  }
  try {
    if (!check.Check(value)) return { error: `invalid frame ${JSON.stringify(String((value as any).t)).slice(0, 60)}` };
  } catch (e) {
    return { error: `invalid frame: ${(e as Error).message}` };
  }
  return { frame: value as T };
}

/** Used by the hub for frames from a host. */
export const decodeHostFrame = (bytes: ArrayBuffer | Uint8Array) => decodeWith<HostToHub>(bytes, checkHostToHub, true);
/** Used by the host CLI for frames from the hub. */
export const decodeHubFrame = (bytes: ArrayBuffer | Uint8Array) => decodeWith<HubToHost>(bytes, checkHubToHost);

/**
 * A host frame's bytes, or why the hub would refuse it: too deep to encode, over FRAME_MAX_BYTES,
 * or refused by the hub's own decoder and schema. The hub closes a channel on such a frame, with
 * every run on it, so the host CLI sends only frames this accepts.
 */
export function encodeHostFrame(frame: HostToHub): { bytes: Uint8Array; error?: undefined } | { bytes?: undefined; error: string } {
  let bytes: Uint8Array;
  try {
    bytes = encoder.encode(frame);
  } catch (e) {
    return { error: `cannot encode: ${(e as Error).message}` };
  }
  if (bytes.byteLength > FRAME_MAX_BYTES) return { error: `frame of ${bytes.byteLength} bytes is over ${FRAME_MAX_BYTES}` };
  const d = decodeHostFrame(bytes);
  return d.error !== undefined ? { error: d.error } : { bytes };
}
