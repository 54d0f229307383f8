// What one node's periodic catalog resync costs (AGENTS_RESYNC_MS, 5 minutes): the node compares the
// agents it holds with the table so that an event lost for good cannot leave it wrong. Seeds
// BENCH_AGENTS approved public agents, loads the catalog, then times resyncs that find nothing changed:
// wall time and the node's CPU.
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npx tsx bench/catalog-resync.ts
import { runIfMain } from './main.js';
import { startTestHub } from '../test/helpers/hub.js';
import { catalogOn } from '../src/agents/catalog.js';
import { seed } from './http.js';

export async function run(): Promise<void> {
  const n = Number(process.env.BENCH_AGENTS ?? 20_000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const t = await startTestHub({ agentsResyncMs: 3_600_000 } as any);
  try {
    const owner = await t.user('bench-owner');
    await seed(t.hub.ctx, owner.id, n);
    const catalog = catalogOn(t.hub.ctx.bus)! as any;
    catalog.stale = true; // the seed sent no events: the next read loads every row
    await t.client().market.list({ pageSize: 20 });
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await catalog.resync();
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
      if (catalog.dirty.size) throw new Error(`resync found ${catalog.dirty.size} rows changed; none were`);
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(JSON.stringify({ agents: n, rounds, wallMsMedian: +med(wall).toFixed(1), nodeCpuMsMedian: +med(cpu).toFixed(1), heapMB: +(process.memoryUsage().heapUsed / 1e6).toFixed(1) }));
  } finally {
    await t.close();
  }
}

runIfMain(import.meta.url, run);
