// A MessagePack Decoder whose string values are decoded by Node's native
// UTF-8 decoder. @msgpack/msgpack decodes strings of up to 200 bytes in
// JavaScript, pushing every code unit into an array and joining chunks with
// String.fromCharCode: a delta frame's text cost more garbage (≈1.2 KB per
// delta, bench/heap-summary.ts) than the rest of its way to the SSE reader.
// Map keys keep the library's key cache; limits, short input and every other
// case go to the library's own method, so its errors are unchanged. The hook
// is a method of the pinned 3.1.3 (package.json); test/protocol.test.ts checks
// it is still there and still used.
import { Decoder, type DecoderOptions } from '@msgpack/msgpack';

/** Buffer's native UTF-8 slice works on any Uint8Array (invalid bytes become U+FFFD, as TextDecoder does). */
export const utf8Slice = (Buffer.prototype as unknown as { utf8Slice(this: Uint8Array, start: number, end: number): string }).utf8Slice;

interface DecoderInternals {
  bytes: Uint8Array;
  pos: number;
  maxStrLength: number;
  stateIsMapKey(): boolean;
  decodeUtf8String(byteLength: number, headerOffset: number): string;
}

export function nativeStringDecoder(options: DecoderOptions): Decoder {
  const decoder = new Decoder(options);
  const d = decoder as unknown as DecoderInternals;
  const library = d.decodeUtf8String;
  if (typeof library !== 'function' || typeof d.stateIsMapKey !== 'function') throw new Error('@msgpack/msgpack: Decoder internals changed (decodeUtf8String/stateIsMapKey)');
  d.decodeUtf8String = function (this: DecoderInternals, byteLength: number, headerOffset: number): string {
    const start = this.pos + headerOffset;
    const end = start + byteLength;
    if (byteLength > this.maxStrLength || this.bytes.byteLength < end || this.stateIsMapKey()) return library.call(this, byteLength, headerOffset);
    this.pos = end;
    return utf8Slice.call(this.bytes, start, end);
  };
  return decoder;
}
