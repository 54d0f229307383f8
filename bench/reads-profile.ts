// Signed-in market reads against the bare uWS endpoint, short and repeatable,
// with an optional CPU profile of the hub's (main) thread while the signed-in
// reads run: the loop for working on the read path (bench/http.ts is the
// full table).
//
//   npx tsx bench/reads-profile.ts [profile-prefix]   (BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS;
//   BENCH_LIMITS=1 counts every request against per-key and per-IP limits too high to refuse; bench/http.ts turns them off, and with REDIS_URL adds a row with them on in Redis)
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { runIfMain } from './main.js';
import { drive, seed } from './http.js';
import { startTestHub } from '../test/helpers/hub.js';
import { uws, type us_listen_socket } from '../src/server/uws.js';
import { notifyAgentChanged } from '../src/agents/usage.js';
import { summarise } from './profile-summary.js';

runIfMain(import.meta.url, async () => {
  const seconds = Number(process.env.BENCH_SECONDS ?? 4);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const conns = Number(process.env.BENCH_CONNECTIONS ?? 16);
  const prefix = process.argv[2];
  const t = await startTestHub(process.env.BENCH_LIMITS === '1' ? { rateLimitPerMinute: 1e9, rateLimitPerIpPerMinute: 1e9 } : { rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0 });
  let bare: us_listen_socket | undefined;
  try {
    const owner = await t.user('bench-owner');
    const viewer = await t.user('bench-viewer');
    const ids = await seed(t.hub.ctx, owner.id, 200);
    notifyAgentChanged(t.hub.ctx.bus, ...ids);
    const one = await t.api('GET', `/api/v1/agents/${encodeURIComponent(ids[0])}`);
    const page = await t.api('GET', '/api/v1/agents?pageSize=20');
    const bodies: Record<string, string> = { '/bare/agent': one.text, '/bare/list': page.text };
    const app = uws.App().get('/bare/*', (res, req) => {
      const body = bodies[req.getUrl()] ?? '{}';
      res.cork(() => res.writeHeader('Content-Type', 'application/json').end(body));
    });
    bare = await new Promise<us_listen_socket>((ok, no) => app.listen('127.0.0.1', 0, (s) => (s ? ok(s) : no(new Error('bare listen failed')))));
    const bareUrl = `http://127.0.0.1:${uws.us_socket_local_port(bare)}`;
    const signedIn = `Authorization: Bearer ${viewer.key}\r\n`;
    const byId = ids.map((id) => `/api/v1/agents/${encodeURIComponent(id)}`);
    const targets = [
      { name: 'bare one', base: bareUrl, paths: ['/bare/agent'], headers: '' },
      { name: 'bare page', base: bareUrl, paths: ['/bare/list'], headers: '' },
      { name: 'signed by id', base: t.url, paths: byId, headers: signedIn, prof: 'byid' },
      { name: 'signed list', base: t.url, paths: ['/api/v1/agents?pageSize=20'], headers: signedIn, prof: 'list' },
    ];
    for (const x of targets) await drive(x.base, x.paths, conns, 1000, x.headers);
    const count = targets.map(() => 0);
    const session = prefix ? new Session() : undefined;
    session?.connect();
    await session?.post('Profiler.enable');
    await session?.post('Profiler.setSamplingInterval', { interval: 200 });
    for (let r = 0; r < rounds; r++)
      for (let i = 0; i < targets.length; i++) {
        const x = targets[i];
        if (session && x.prof && r === 0) await session.post('Profiler.start');
        count[i] += (await drive(x.base, x.paths, conns, (seconds * 1000) / rounds, x.headers)).count;
        if (session && x.prof && r === 0) {
          const { profile } = await session.post('Profiler.stop');
          writeFileSync(`${prefix}-${x.prof}.cpuprofile`, JSON.stringify(profile));
          console.log(`--- ${x.name}\n${summarise(profile as any, 30)}`);
        }
      }
    const rps = count.map((c) => Math.round(c / seconds));
    targets.forEach((x, i) => console.log(`${x.name.padEnd(14)} ${rps[i]} req/s`));
    console.log(`signed by id ${((rps[2] / rps[0]) * 100).toFixed(1)} % of bare, signed list ${((rps[3] / rps[1]) * 100).toFixed(1)} % of bare; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}${prefix ? ' (first slice of each hub target profiled)' : ''}`);
  } finally {
    if (bare) uws.us_listen_socket_close(bare);
    await t.close();
  }
});
