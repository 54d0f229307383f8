// What the message path's two PostgreSQL functions cost PostgreSQL itself, with nothing else
// running: hub_accept (one message starts) and hub_end_runs (its run ends: four rows, a charge,
// an owner's earning), called back to back on one connection for a batch of B messages, on
// sessions of distinct guests using one paid agent. Reported per message: the backend's CPU
// (utime+stime from /proc, so PostgreSQL must run on this machine) and each call's wall time,
// medians of REPS windows. synchronous_commit is off for the connection, so the figures are the
// statements' work, not the disk's. Needs DATABASE_URL.
//
// A schema or function change is measured beside the code as it is with SQL_AB=file.sql: a second
// database gets the file run on it after its migrations (say, an older or newer version of a
// function: `create or replace …`), and the two sides' windows alternate on their own connections
// in this one process, so both see the same machine. SQL_ONE_RUNNER=1 runs every session as the
// agent's owner (one user, no earnings), as bench/dispatch does.
//
//   npx tsx bench/sql-calls.ts      (appends its section to bench/RESULTS.md; SQL_N=2000 messages per window, SQL_BATCH=1,10, SQL_REPS=5,
//                                    SQL_SET="name=value;…", SQL_AB=file.sql, SQL_ONE_RUNNER=1)
import { appendFileSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { runIfMain, recording } from './main.js';
import { processCpuMs } from './proc-cpu.js';
import { createTestDatabase } from '../test/helpers/hub.js';
import { openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/log.js';

const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const N = Number(process.env.SQL_N ?? 2000);
const BATCHES = (process.env.SQL_BATCH ?? '1,10').split(',').map(Number);
const REPS = Number(process.env.SQL_REPS ?? 5);
const SESSIONS = 200;
/** What the hub passes for a guest's message (config guestRunMinBalance's default). */
const GUEST_FLOOR = 1000;
const AB = process.env.SQL_AB;
const ONE_RUNNER = process.env.SQL_ONE_RUNNER === '1';

const id = (p: string) => `${p}_${randomBytes(8).toString('hex')}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const cpuMs = (pid: number): number => processCpuMs(pid) ?? NaN;

async function seed(c: pg.Client) {
  const owner = id('usr');
  const host = id('hst');
  const agent = id('agt');
  await c.query(`insert into users (id, name, balance) values ($1, 'owner', 0)`, [owner]);
  await c.query(`insert into hosts (id, user_id, name, credential_hash, capacity) values ($1, $2, 'h', $3, 100000)`, [host, owner, id('cred')]);
  await c.query(`insert into agents (id, owner_id, name, display_name, scope, pricing, usage_status, host_id, engine)
                 values ($1, $2, 'a', 'A', 'public', 'paid', 'online', $3, 'claude')`, [agent, owner, host]);
  const sessions: Array<{ sid: string; uid: string }> = [];
  if (ONE_RUNNER) await c.query(`update users set balance = 1000000000000 where id = $1`, [owner]);
  for (let i = 0; i < SESSIONS; i++) {
    const uid = ONE_RUNNER ? owner : id('usr');
    const sid = id('ses');
    if (!ONE_RUNNER) await c.query(`insert into users (id, name, balance) values ($1, 'guest', 1000000000000)`, [uid]);
    await c.query(`insert into sessions (id, user_id, agent_id, agent_name, title) values ($1, $2, $3, 'a', 't')`, [sid, uid, agent]);
    sessions.push({ sid, uid });
  }
  return { host, agent, sessions };
}

/** One window: n messages in batches of b, each accepted then ended. */
async function window(c: pg.Client, pid: number, w: Awaited<ReturnType<typeof seed>>, n: number, b: number) {
  let acceptMs = 0;
  let endMs = 0;
  let next = 0;
  const cpu0 = cpuMs(pid);
  for (let done = 0; done < n; done += b) {
    // Distinct sessions in a batch (one message per session, as the hub's batches).
    const batch = Array.from({ length: b }, (_, i) => ({ ...w.sessions[(next + i) % SESSIONS], tid: id('run'), mid: id('msg'), ord: i }));
    next += b;
    let t = performance.now();
    const acc = await c.query(`select * from hub_accept($1::jsonb, 10, 100)`, [JSON.stringify(batch.map((m) => ({
      ord: m.ord, sid: m.sid, uid: m.uid, tid: m.tid, mid: m.mid, content: 'hello there', hid: w.host, cap: 100000,
      aid: w.agent, engine: 'claude', wd: '/tmp', mode: null, effort: null, gmin: ONE_RUNNER ? 0 : GUEST_FLOOR,
    })))]);
    acceptMs += performance.now() - t;
    if (acc.rows.some((r) => r.o_outcome !== 'running')) throw new Error(`not started: ${JSON.stringify(acc.rows)}`);
    t = performance.now();
    await c.query(`select * from hub_end_runs($1::jsonb, $2::jsonb)`, [JSON.stringify(batch.map((m) => ({
      run: m.tid, sid: m.sid, hid: w.host, aid: w.agent, engine: 'claude', ok: true, aborted: false, tin: 1200, tout: 300, cost: 1800,
      share: 0.7, model: 'claude-x', esid: 'es1', ecode: null, emsg: null, amodel: null, n: 4, texts: 2, fresh: 3, last: 'done', partial: null,
      rows: [
        { id: id('msg'), role: 'assistant', kind: 'text', content: 'Looking at it.', seq: null, off: 0 },
        { id: id('msg'), role: 'assistant', kind: 'tool_use', content: null, seq: null, off: 1, tool_name: 'Read', tool_id: 't1', tool_input: { path: 'a.ts' } },
        { id: id('msg'), role: 'assistant', kind: 'tool_result', content: null, seq: null, off: 1, tool_id: 't1', tool_result: { ok: true } },
        { id: id('msg'), role: 'assistant', kind: 'text', content: 'done', seq: null, off: 2 },
      ],
    }))), '{}']);
    endMs += performance.now() - t;
  }
  return { cpu: (cpuMs(pid) - cpu0) / n, accept: acceptMs / n, end: endMs / n };
}

interface Side {
  c: pg.Client;
  pid: number;
  w: Awaited<ReturnType<typeof seed>>;
  close(): Promise<void>;
}

/** A database of its own, migrated (then `extra` run on it), seeded and warmed, with its connection's backend. */
async function side(base: string, extra?: string): Promise<Side> {
  const db = await createTestDatabase(base);
  try {
    const hub = await openDatabase({ databaseUrl: db.url, dataDir: '' }, createLogger('silent'));
    await hub.close();
    const c = new pg.Client({ connectionString: db.url, application_name: 'bench-sql-calls' });
    c.on('error', () => {}); // the drop below ends it when a window fails
    await c.connect();
    const close = async () => {
      await c.end().catch(() => undefined);
      await db.drop();
    };
    try {
      if (extra) await c.query(extra);
      await c.query(`set synchronous_commit = off`);
      // SQL_SET="enable_hashjoin=off;…": session settings for an experiment (a function's own SET clause wins).
      for (const kv of (process.env.SQL_SET ?? '').split(';').filter(Boolean)) await c.query(`set ${kv}`);
      const pid = (await c.query(`select pg_backend_pid() as pid`)).rows[0].pid as number;
      const w = await seed(c);
      await window(c, pid, w, 400, 1); // warm: plans cached, tables past their first pages
      await c.query('analyze'); // tables with statistics, as in production: only then did PostgreSQL keep custom plans
      return { c, pid, w, close };
    } catch (e) {
      await close();
      throw e;
    }
  } catch (e) {
    await db.drop().catch(() => undefined);
    throw e;
  }
}

export async function run(opts: { write?: boolean } = {}): Promise<string> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const out = `\n## PostgreSQL per message: hub_accept and hub_end_runs alone (bench/sql-calls.ts)\n\nSkipped: DATABASE_URL is not set (the backend's CPU is read from /proc).\n`;
    if (opts.write) appendFileSync(RESULTS, out);
    return out;
  }
  const sides: Side[] = [];
  const lines: string[] = [];
  try {
    sides.push(await side(base));
    if (AB) sides.push(await side(base, readFileSync(AB, 'utf8')));
    lines.push('', '## PostgreSQL per message: hub_accept and hub_end_runs alone (bench/sql-calls.ts)', '',
      `${N} messages per window, median of ${REPS} windows; backend CPU from /proc, each call's wall time on the client; synchronous_commit off${ONE_RUNNER ? '; every session run by the agent\'s owner' : ''}.`
      + (AB ? ` Beside the code as it is (A), B: a database with ${AB} run on it after its migrations; their windows alternate.` : ''), '');
    if (AB) lines.push(`| batch | PG CPU per message, A | B | B / A | hub_end_runs wall time per message, A / B |`, `|---|---|---|---:|---|`);
    else lines.push(`| batch | PG CPU per message | hub_accept wall time per message | hub_end_runs wall time per message |`, `|---|---|---|---|`);
    for (const b of BATCHES) {
      const reps: Array<Array<{ cpu: number; accept: number; end: number }>> = sides.map(() => []);
      for (let r = 0; r < REPS; r++) for (const [i, x] of sides.entries()) reps[i].push(await window(x.c, x.pid, x.w, N, b));
      const med = (i: number, k: 'cpu' | 'accept' | 'end') => median(reps[i].map((x) => x[k])) * 1000;
      const us = (v: number) => `${v.toFixed(0)} µs`;
      if (AB) lines.push(`| ${b} | ${us(med(0, 'cpu'))} | ${us(med(1, 'cpu'))} | ${(med(1, 'cpu') / med(0, 'cpu')).toFixed(2)} | ${us(med(0, 'end'))} / ${us(med(1, 'end'))} |`);
      else lines.push(`| ${b} | ${us(med(0, 'cpu'))} | ${us(med(0, 'accept'))} | ${us(med(0, 'end'))} |`);
    }
  } finally {
    for (const x of sides) await x.close();
  }
  const out = lines.join('\n') + '\n';
  console.log(out);
  if (opts.write) appendFileSync(RESULTS, out);
  return out;
}

runIfMain(import.meta.url, () => run({ write: recording() }));
