// Bare fan-out, the delta baseline (issue 15): the floor any relay pays.
// A producer sends MessagePack frames `{t: 'run.delta', runId, text}` on
// `/produce/{stream}` (one WebSocket per stream, as a host per turn); each
// goes to the SSE reader of that stream (`GET /events/{stream}`) as a
// message.delta event with what the spec asks of every event: an `id:` line
// (`<runId>:<n>`, as the hub numbers a run's events) and `sessionId` and
// `status` in its data, so the readers parse as many bytes as from the hub.
// The frames of one event-loop turn are gathered and written in one corked
// write per reader at setImmediate (after the poll phase that read them). No backpressure handling: uWS buffers what the
// socket does not take. Runs in its own process (bench/baselines/fork.ts).
import { decode } from '@msgpack/msgpack';
import { uws, type HttpResponse } from '../../src/server/uws.js';
import { serveBaseline } from './fork.js';

interface Reader { res: HttpResponse; pending: string[]; sessionId: string; n: number }
const readers = new Map<string, Reader>();
const dirty = new Set<Reader>();
let scheduled = false;

function flush(): void {
  scheduled = false;
  for (const r of dirty) {
    const text = r.pending.join('');
    r.pending.length = 0;
    r.res.cork(() => r.res.write(text));
  }
  dirty.clear();
}

const app = uws.App();
app.get('/events/:stream', (res, req) => {
  const id = req.getParameter(0)!;
  // As long as a hub session id (`ses_` and 16 characters).
  const reader: Reader = { res, pending: [], sessionId: `ses_${id.padStart(16, '0')}`, n: 0 };
  res.onAborted(() => {
    readers.delete(id);
    dirty.delete(reader);
  });
  res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').writeHeader('cache-control', 'no-store').write(': open\n\n'));
  readers.set(id, reader);
});
app.ws<{ stream: string }>('/produce/:stream', {
  upgrade: (res, req, ctx) =>
    res.upgrade({ stream: req.getParameter(0)! }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), ctx),
  message: (ws, msg) => {
    const r = readers.get(ws.getUserData().stream);
    if (!r) return;
    const f = decode(new Uint8Array(msg)) as { runId: string; text: string };
    r.pending.push(`id: ${f.runId}:${++r.n}\nevent: message.delta\ndata: ${JSON.stringify({ sessionId: r.sessionId, status: 'processing', delta: f.text })}\n\n`);
    dirty.add(r);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  },
});
app.listen('127.0.0.1', 0, (listen) => {
  if (!listen) throw new Error('bare fan-out: listen failed');
  serveBaseline(uws.us_socket_local_port(listen), () => uws.us_listen_socket_close(listen));
});
