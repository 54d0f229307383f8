// A fake host that answers every run it is given (a delta, a message, then
// run.end) and counts the run.start frames per run, so fault tests can tell
// "answered once" from "started twice" across reconnects.
import { connectFakeHost, type FakeHost, type FakeHostOptions } from './host.js';

type HubLike = { url: string } | string;

export interface AnsweringHost {
  /** The current channel (a new one after reconnect). */
  host: FakeHost;
  /** runId → how many run.start frames arrived for it, over every channel. */
  starts: Map<string, number>;
  /** Runs this host answered with run.end. */
  ended: Set<string>;
  /** Drops the channel (without a close handshake when `abrupt`) and opens a new one to `hub`. */
  reconnect(hub: HubLike, abrupt?: boolean): Promise<void>;
  close(): void;
}

/**
 * Connects a fake host that ends each run `delayMs` after its run.start (0: at once).
 * Runs whose run.end could not be sent (channel gone) are not retried: the hub must judge them.
 */
export async function answeringHost(hub: HubLike, credential: string, opts: FakeHostOptions & { delayMs?: number } = {}): Promise<AnsweringHost> {
  const starts = new Map<string, number>();
  const ended = new Set<string>();
  const attach = (h: FakeHost) => {
    let i = 0;
    // Frames arrive through the helper's list; look at new ones on every message (and at once).
    const scan = () => {
      for (; i < h.frames.length; i++) {
        const f = h.frames[i];
        if (f.t !== 'run.start') continue;
        starts.set(f.runId, (starts.get(f.runId) ?? 0) + 1);
        const answer = () => {
          if (h.ws.readyState !== h.ws.OPEN) return;
          h.send({ t: 'run.delta', runId: f.runId, text: 'answer' });
          h.send({ t: 'run.message', runId: f.runId, role: 'assistant', blocks: [{ kind: 'text', content: `answer to ${f.prompt.slice(0, 100)}` }] });
          h.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
          ended.add(f.runId);
        };
        if (opts.delayMs) setTimeout(answer, opts.delayMs).unref();
        else answer();
      }
    };
    h.ws.on('message', scan);
    scan();
    return h;
  };
  const out: AnsweringHost = {
    host: attach(await connectFakeHost(hub, credential, opts)),
    starts,
    ended,
    async reconnect(to, abrupt = true) {
      if (abrupt) out.host.ws.terminate();
      else out.host.close();
      out.host = attach(await connectFakeHost(to, credential, opts));
    },
    close: () => out.host.ws.terminate(),
  };
  return out;
}
