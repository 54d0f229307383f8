// Bare relay, the dispatch baseline (issue 15): the floor any durable
// dispatcher pays. Takes `POST /m/{host}/{session}` with the hub's JSON body,
// commits one row to PostgreSQL with one statement, then forwards a
// MessagePack run.start frame to that host's WebSocket (`/host/{host}`) and
// answers 202. No auth, no queue, no session state: only what cannot be
// skipped. Runs in its own process (bench/baselines/fork.ts); BENCH_RELAY_DB
// is the bench's database, where it keeps a table of its own.
import pg from 'pg';
import { encode } from '@msgpack/msgpack';
import { uws, type WebSocket } from '../../src/server/uws.js';
import { serveBaseline } from './fork.js';

const db = new pg.Pool({ connectionString: process.env.BENCH_RELAY_DB, max: 10, application_name: 'bench_relay' });
await db.query('create table if not exists bench_relay (id bigserial primary key, session_id text not null, content text not null, at timestamptz not null default now())');

interface Host { id: string }
const hosts = new Map<string, WebSocket<Host>>();
const app = uws.App();
app.ws<Host>('/host/:id', {
  upgrade: (res, req, ctx) =>
    res.upgrade({ id: req.getParameter(0)! }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), ctx),
  open: (ws) => void hosts.set(ws.getUserData().id, ws),
  close: (ws) => void hosts.delete(ws.getUserData().id),
});
app.post('/m/:host/:session', (res, req) => {
  const host = req.getParameter(0)!;
  const sessionId = req.getParameter(1)!;
  let aborted = false;
  res.onAborted(() => (aborted = true));
  const chunks: Buffer[] = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0))); // uWS neuters the chunk after the callback
    if (!last) return;
    let content: string;
    try {
      content = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).content);
    } catch {
      return void res.cork(() => res.writeStatus('400 Bad Request').end());
    }
    const answer = (status: string, body: string) => !aborted && res.cork(() => res.writeStatus(status).writeHeader('content-type', 'application/json').end(body));
    db.query('insert into bench_relay (session_id, content) values ($1, $2) returning id', [sessionId, content]).then(
      (r) => {
        hosts.get(host)?.send(encode({ t: 'run.start', runId: String(r.rows[0].id), sessionId, prompt: content }), true);
        answer('202 Accepted', '{"data":{"status":"started"}}');
      },
      () => answer('503 Service Unavailable', '{"error":{"code":"db"}}'),
    );
  });
});
app.listen('127.0.0.1', 0, (listen) => {
  if (!listen) throw new Error('bare relay: listen failed');
  serveBaseline(uws.us_socket_local_port(listen), async () => {
    uws.us_listen_socket_close(listen);
    await db.query('drop table if exists bench_relay').catch(() => undefined);
    await db.end();
  });
});
