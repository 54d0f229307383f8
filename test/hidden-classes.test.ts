// Objects a node keeps per host channel share one hidden class (V8 map). On Node 20, `{ ...e, more }`
// gives every object it makes a map of its own (about 300 bytes of map, descriptors and property
// array each, bench/heap-diff.ts), and the code reading them goes megamorphic. Checked in a child
// process: V8's %HaveSameMap needs --allow-natives-syntax.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs `body` (plain JavaScript; `%` natives allowed) as an ES module under tsx; answers what it printed. */
function natives(body: string): string {
  return execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', body], { cwd: root, encoding: 'utf8' }).trim();
}

test('the single-node presence store keeps every host entry with one hidden class', () => {
  const out = natives(`
    const { LocalPresence } = await import('./src/hosts/presence.ts');
    const p = new LocalPresence();
    for (let i = 0; i < 100; i++) await p.set('host_' + i, { nodeId: 'n1', running: 0, capacity: 5, engines: [], lastSeenAt: Date.now() }, 60000);
    await p.refresh(['host_1', 'host_2'], 'n1', 60000, Date.now());
    await p.patch('host_3', { running: 1 });
    const a = await p.get('host_1'), b = await p.get('host_2'), c = await p.get('host_3'), d = await p.get('host_99');
    // Fast properties too: a dictionary-mode object shares its class but is larger than either.
    console.log([%HaveSameMap(a, b), %HaveSameMap(b, c), %HaveSameMap(c, d), %HasFastProperties(d)].join(','));
  `);
  assert.equal(out, 'true,true,true,true');
});

test("the catalog's cached market views share one hidden class with fast properties", () => {
  const out = natives(`
    const { plainView } = await import('./src/agents/views.ts');
    const agent = (i) => ({ id: 'agt_' + i, name: 'n' + i, displayName: 'd', description: '', tags: [], category: 'c', scope: 'public', pricing: 'free',
      usageStatus: 'online', reviewStatus: 'approved', engine: 'claude-code', modelName: null, expectedInput: '', expectedOutput: '', usageCount: 0,
      sessionCount: 0, runs: 0, cost: 0, earn: 0, favoriteCount: 0, enable: true, version: 1, updatedAt: new Date(), createdAt: new Date() });
    const views = Array.from({ length: 100 }, (_, i) => plainView(agent(i), 'owner'));
    console.log([%HaveSameMap(views[1], views[2]), %HaveSameMap(views[2], views[99]), %HasFastProperties(views[99])].join(','));
  `);
  assert.equal(out, 'true,true,true');
});
