// A minimal SSE reader for tests: frames with their id, event and parsed data.
import { Arrivals } from './waiters.js';
export interface SseFrame {
  id?: string;
  event: string;
  data: any;
}

export interface SseReader {
  status: number;
  headers: Headers;
  frames: SseFrame[];
  /** Resolves when a frame matching pred has arrived (or already has). */
  until(pred: (f: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
  /** Raw text of a non-stream answer. */
  text?: string;
}

export async function openSse(url: string, init: RequestInit): Promise<SseReader> {
  const ctl = new AbortController();
  const res = await fetch(url, { ...init, signal: ctl.signal });
  const arrivals = new Arrivals<SseFrame>('sse: frame');
  const frames = arrivals.items;
  const reader: SseReader = {
    status: res.status,
    headers: res.headers,
    frames,
    ended: Promise.resolve(),
    close: () => ctl.abort(),
    until(pred, timeoutMs = 10_000) {
      return arrivals.until(pred, timeoutMs, () => JSON.stringify(frames.map((f) => f.event)));
    },
  };
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    reader.text = await res.text();
    return reader;
  }
  reader.ended = (async () => {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as any as AsyncIterable<Uint8Array>) {
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const f: Partial<SseFrame> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const c = line.indexOf(':');
            const k = line.slice(0, c);
            const v = line.slice(c + 1).replace(/^ /, '');
            if (k === 'id') f.id = v;
            else if (k === 'event') f.event = v;
            else if (k === 'data') f.data = JSON.parse(v);
          }
          if (!f.event) continue;
          arrivals.push(f as SseFrame);
        }
      }
    } catch {
      /* aborted by the test */
    }
  })();
  return reader;
}
