// Soak: a hub process (src/main.ts, as in production) under a modest mixed
// load for a long time — messages answered by simulated hosts, session lists
// and histories read, SSE readers coming and going, a host reconnecting every
// minute — sampling the hub's RSS and open file descriptors (/proc/<pid>) so
// a leak shows as a slope after warm-up. Not CI: 30 minutes by default.
//
//   npx tsx bench/soak.ts   (DATABASE_URL for PostgreSQL, else embedded PGlite;
//                            SOAK_MINUTES=30, SOAK_SAMPLE_S=30, SOAK_RATE=20 messages/s, SOAK_WARMUP_MINUTES=5)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../test/helpers/hub.js';
import { startNode, call } from '../test/helpers/nodes.js';
import { pairHost, eventually } from '../test/helpers/host.js';
import { answeringHost, type AnsweringHost } from '../test/helpers/answering-host.js';
import { openSse } from '../test/helpers/sse.js';
import { LoadClient } from './load-client.js';
import { machineCpuTimes } from './proc-cpu.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const SAMPLE_S = Number(process.env.SOAK_SAMPLE_S ?? 30);
const RATE = Number(process.env.SOAK_RATE ?? 20);
const WARMUP_MIN = Number(process.env.SOAK_WARMUP_MINUTES ?? Math.min(5, MINUTES / 6));
const HOSTS = 4;
const SESSIONS_PER_HOST = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The hub process's resident set (MB) and open descriptors. */
function sample(pid: number): { rssMb: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb / 102.4) / 10, fds: readdirSync(`/proc/${pid}/fd`).length };
}


async function main() {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'soak-'));
  const adminKey = 'ahk_' + randomBytes(20).toString('hex');
  const hub = await startNode('soak', {
    ...(db.url ? { DATABASE_URL: db.url } : { DATABASE_URL: '' }),
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_PREFIX: `soak${randomBytes(3).toString('hex')}:`,
    DATA_DIR: dataDir,
    SECRET_KEY: 'soak-' + randomBytes(16).toString('hex'),
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: '0',
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    STARTER_TOKENS: '1000000000',
    LOG_LEVEL: 'warn',
  });
  const pid = hub.proc.pid!;
  const client = new LoadClient();
  const hosts: AnsweringHost[] = [];
  const readers = new Set<{ close(): void }>();
  try {
    const u = await call(hub.url, 'POST', '/api/v1/admin/users', { token: adminKey, body: { name: 'soak' } });
    if (u.status !== 201) throw new Error(`user: ${u.status} ${u.text}`);
    const key: string = u.body.data.apiKey;
    const sessions: string[] = [];
    for (let i = 0; i < HOSTS; i++) {
      const { hostId, credential } = await pairHost(hub, key, `soak-${i}`);
      hosts.push(await answeringHost(hub, credential, { capacity: 5, delayMs: 50 }));
      const a = await eventually(async () => {
        const r = await call(hub.url, 'POST', '/api/v1/agents', { token: key, body: { name: `soak-${i}`, scope: 'private', hostId, engine: 'claude-code' } });
        return r.status === 201 ? r.body.data : undefined;
      });
      for (let j = 0; j < SESSIONS_PER_HOST; j++) {
        const s = await call(hub.url, 'POST', '/api/v1/sessions', { token: key, body: { agentId: a.id } });
        if (s.status !== 201) throw new Error(`session: ${s.status} ${s.text}`);
        sessions.push(s.body.data.id);
      }
    }
    const counts = { sent: 0, accepted: 0, refused: 0, errors: 0, reads: 0, sse: 0, reconnects: 0 };
    const end = Date.now() + MINUTES * 60_000;
    const started = Date.now();
    const rows: Array<{ min: number; rssMb: number; fds: number; sent: number; accepted: number; refused: number; errors: number }> = [];
    const cpu0 = machineCpuTimes()!;
    const printRow = () => {
      const s = sample(pid);
      const row = { min: Math.round((Date.now() - started) / 6000) / 10, ...s, sent: counts.sent, accepted: counts.accepted, refused: counts.refused, errors: counts.errors };
      rows.push(row);
      console.log(`${String(row.min).padStart(6)} min  rss ${String(row.rssMb).padStart(7)} MB  fds ${String(row.fds).padStart(4)}  sent ${row.sent}  202 ${row.accepted}  4xx/503 ${row.refused}  errors ${row.errors}  reads ${counts.reads}  sse ${counts.sse}  reconnects ${counts.reconnects}`);
    };
    console.log(`soak: ${MINUTES} min at ${RATE} messages/s on ${db.url ? 'PostgreSQL' : 'embedded PGlite'}${process.env.REDIS_URL ? ' + Redis' : ''}; hub pid ${pid}`);
    printRow();
    let tick = 0;
    let nextSample = Date.now() + SAMPLE_S * 1000;
    while (Date.now() < end) {
      const second = Date.now();
      tick++;
      // Messages, spread over the second.
      for (let i = 0; i < RATE; i++) {
        const sid = sessions[(counts.sent + i) % sessions.length];
        counts.sent++;
        client.post(`${hub.url}/api/v1/sessions/${sid}/messages`, key, { content: `m${counts.sent}` }).then(
          (r) => void (r.status === 202 ? counts.accepted++ : r.status < 500 || r.status === 503 ? counts.refused++ : counts.errors++),
          () => void counts.errors++,
        );
        await sleep(1000 / RATE / 2);
      }
      // Reads: the session list and one history.
      void call(hub.url, 'GET', '/api/v1/sessions?pageSize=20', { token: key }).then(() => counts.reads++, () => counts.errors++);
      void call(hub.url, 'GET', `/api/v1/sessions/${sessions[tick % sessions.length]}/messages?limit=20`, { token: key }).then(() => counts.reads++, () => counts.errors++);
      // An SSE reader every 5 s, each kept 10 s.
      if (tick % 5 === 0) {
        void openSse(`${hub.url}/api/v1/sessions/${sessions[tick % sessions.length]}/events`, { headers: { authorization: `Bearer ${key}` } }).then((r) => {
          counts.sse++;
          readers.add(r);
          setTimeout(() => (r.close(), readers.delete(r)), 10_000);
        }, () => counts.errors++);
      }
      // A host drops its channel and comes back every minute.
      if (tick % 60 === 0) {
        const h = hosts[(tick / 60) % hosts.length];
        await h.reconnect(hub).then(() => counts.reconnects++, () => counts.errors++);
      }
      if (Date.now() >= nextSample) {
        printRow();
        nextSample += SAMPLE_S * 1000;
      }
      await sleep(Math.max(0, 1000 - (Date.now() - second)));
    }
    await sleep(2000);
    printRow();
    const cpu1 = machineCpuTimes()!;
    const after = rows.filter((r) => r.min >= WARMUP_MIN);
    const first = after[0] ?? rows[0];
    const last = rows[rows.length - 1];
    const range = (k: 'rssMb' | 'fds') => `${Math.min(...after.map((r) => r[k]))}–${Math.max(...after.map((r) => r[k]))}`;
    console.log(`\nafter warm-up (${Math.round(WARMUP_MIN * 10) / 10} min): RSS ${first.rssMb} → ${last.rssMb} MB (range ${range('rssMb')}), fds ${first.fds} → ${last.fds} (range ${range('fds')})`);
    console.log(`messages: sent ${counts.sent}, 202 ${counts.accepted}, refused ${counts.refused}, errors ${counts.errors}; reads ${counts.reads}, SSE readers ${counts.sse}, host reconnects ${counts.reconnects}`);
    console.log(`stolen CPU over the run: ${(((cpu1.steal - cpu0.steal) / (cpu1.total - cpu0.total)) * 100).toFixed(2)}%`);
  } finally {
    for (const r of readers) r.close();
    for (const h of hosts) h.close();
    client.close();
    hub.kill('SIGTERM');
    await hub.exited;
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
