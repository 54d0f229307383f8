// A turn's streamed text not yet covered by a complete message, kept as a
// few strings rather than one per delta (each live string costs every
// young-generation collection until it is promoted). Pieces are joined PIECES
// at a time into a chunk; chunks are joined only when the text is read, so
// each character is copied once on the way in, however long the answer. (A
// second level that joined every chunk into one string again copied the
// whole text every PIECES² deltas: stalls of tens of milliseconds with a few
// long turns, bench/RESULTS.md, fifteenth session.) At the default
// RUN_OUTPUT_MAX_BYTES (8 MB) a turn holds at most 32,768 chunks (one-byte
// deltas), about 1,600 with deltas of 20 bytes: strings promoted out of the
// young generation after their second collection.

/** Pieces joined at a time. */
const PIECES = 256;

export class PartialText {
  private chunks: string[] = [];
  private pieces: string[] = [];
  /** UTF-8 bytes held (bounded by the caller: src/limits.ts). */
  bytes = 0;

  push(text: string, bytes: number): void {
    this.bytes += bytes;
    this.pieces.push(text);
    if (this.pieces.length < PIECES) return;
    this.chunks.push(this.pieces.join(''));
    this.pieces = [];
  }

  /** The whole text so far. */
  text(): string {
    return this.chunks.join('') + this.pieces.join('');
  }

  clear(): void {
    this.chunks = [];
    this.pieces = [];
    this.bytes = 0;
  }
}
