// The engine's stdout → its lines, each at most `maxBytes`. readline keeps a partial line without
// bound, and what an engine prints is steered by whoever wrote the prompt: gigabytes without a
// newline would grow agent-host's memory on the owner's machine until the OOM killer came.
import type { Readable } from 'node:stream';

/** Longest line taken from an engine (Claude Code prints one JSON object per line; a tool result with an image is a few MB). */
export const ENGINE_LINE_MAX_BYTES = 32 * 1024 * 1024;

export interface LineSink {
  line(text: string): void;
  /** The line being read passed `maxBytes`: nothing more of this stream is delivered. */
  tooLong(bytes: number): void;
}

/** Feeds `input`'s lines (\n or \r\n ended; a last line without one too) to `sink`, holding at most one line's bytes. */
export function readEngineLines(input: Readable, sink: LineSink, maxBytes = ENGINE_LINE_MAX_BYTES): void {
  let pieces: Buffer[] = [];
  let pending = 0;
  let over = false;
  const emit = (tail: Buffer) => {
    pieces.push(tail);
    const buf = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
    pieces = [];
    pending = 0;
    const end = buf.length > 0 && buf[buf.length - 1] === 0x0d ? buf.length - 1 : buf.length;
    sink.line(buf.toString('utf8', 0, end));
  };
  const refuse = (bytes: number) => {
    over = true;
    pieces = [];
    sink.tooLong(bytes);
  };
  input.on('data', (chunk: Buffer) => {
    let start = 0;
    while (!over) {
      const nl = chunk.indexOf(0x0a, start);
      const stop = nl === -1 ? chunk.length : nl;
      if (pending + stop - start > maxBytes) return refuse(pending + stop - start);
      if (nl === -1) {
        if (stop > start) {
          pieces.push(chunk.subarray(start));
          pending += stop - start;
        }
        return;
      }
      emit(chunk.subarray(start, nl));
      start = nl + 1;
    }
    // Past the bound the rest is read and dropped, so the engine is not left blocked on a full pipe.
  });
  input.on('end', () => {
    if (!over && pending > 0) emit(Buffer.alloc(0));
  });
}
