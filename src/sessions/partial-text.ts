// A turn's streamed text not yet covered by a complete message, kept as a
// few strings rather than one per delta (each live string costs every
// young-generation collection). Pieces are joined PIECES at a time into a
// chunk, chunks PIECES at a time, so each character is copied about twice
// however long the answer, not once per join as re-joining the whole text would.

/** Pieces (and chunks) joined at a time. */
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
    if (this.chunks.length >= PIECES) this.chunks = [this.chunks.join('')];
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
