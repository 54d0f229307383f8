// A turn's streamed text not yet covered by a complete message, kept as UTF-8
// bytes in one buffer outside the JavaScript heap, grown by doubling. Kept as
// strings (one per delta, joined a few hundred at a time), every delta's
// string outlived two young-generation collections and was promoted to the
// old generation, whose mark-compacts then paused the event loop for 5–11 ms
// a few times a phase at 10,000 deltas/s (`--trace-gc`, bench/RESULTS.md,
// eighteenth session). A buffer is one object however long the turn, and each
// character is copied once on the way in (twice at most, counting the
// doublings). Text from a host never holds a lone surrogate (its frames are
// decoded with replacement: host-protocol/native-strings.ts), so it reads back
// exactly as it was written.

/** The first buffer's size; it doubles as the text grows, up to the run's bound. */
const FIRST_BYTES = 1024;

export class PartialText {
  private buf: Buffer | undefined;
  private used = 0;
  /** UTF-8 bytes held (bounded by the caller: src/limits.ts). */
  bytes = 0;

  /** `max`: the run's output bound (RUN_OUTPUT_MAX_BYTES), past which the buffer does not double. */
  constructor(private readonly max = Infinity) {}

  /** `bytes`: the text's UTF-8 length (Buffer.byteLength), which the caller has already counted. */
  push(text: string, bytes: number): void {
    const need = this.used + bytes;
    if (!this.buf || need > this.buf.length) this.grow(need);
    this.used += this.buf!.write(text, this.used);
    this.bytes += bytes;
  }

  private grow(need: number): void {
    // Not from Buffer's shared pool: a turn's buffer is kept for the turn's length.
    const next = Buffer.allocUnsafeSlow(Math.max(need, Math.min(this.max, Math.max(FIRST_BYTES, 2 * (this.buf?.length ?? 0)))));
    if (this.buf) this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  /** The whole text so far. */
  text(): string {
    return this.buf ? this.buf.toString('utf8', 0, this.used) : '';
  }

  clear(): void {
    this.buf = undefined;
    this.used = 0;
    this.bytes = 0;
  }
}
