// The batched writes of what hosts report (src/hosts/store.ts): a tick's hellos
// and last-seen times go to the hosts table as one statement each, every
// column one array parameter. Values that an array literal must escape
// (quotes, backslashes, braces, commas, NULL-looking text) arrive as sent, on
// the embedded database as on PostgreSQL; a row that is gone is skipped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost } from './helpers/host.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('hellos and last-seen times are written in one batch each, awkward values intact', async () => {
  const u = await t.user();
  const a = (await pairHost(t, u.key, 'a')).hostId;
  const b = (await pairHost(t, u.key, 'b')).hostId;
  const c = (await pairHost(t, u.key, 'c')).hostId;
  const store = t.hub.hostStore;
  const engines = [
    { id: 'claude-code', displayName: 'Claude "Code" \\ {1,2}', version: '1.0.0' },
    { id: 'codex', displayName: 'NULL', version: null as unknown as string },
  ];
  const seenAt = Date.UTC(2026, 10, 28, 4, 0, 0, 123);
  store.recordHello(a, { name: 'qu"ote \\ back {brace}, comma', cliVersion: 'NULL', protocolVersion: 1, engines, capacity: 3 });
  store.recordHello(b, { name: 'ünïcødé 名前 ', cliVersion: '', protocolVersion: 2, engines: [], capacity: 1 });
  store.recordHello('hst_gone', { name: 'no row', cliVersion: '1', protocolVersion: 1, engines: [], capacity: 1 });
  store.touch(c, seenAt);
  await store.flush();

  const conn = t.hub.ctx.em().getConnection();
  const rows = await conn.execute(`select id, name, cli_version, protocol_version, engines, capacity, last_seen_at from hosts where id in (?, ?, ?) order by name`, [a, b, c]);
  const byId = new Map(rows.map((r: any) => [r.id, r]));
  const ra: any = byId.get(a), rb: any = byId.get(b), rc: any = byId.get(c);
  assert.equal(ra.name, 'qu"ote \\ back {brace}, comma');
  assert.equal(ra.cli_version, 'NULL', 'the text NULL, not a null');
  assert.equal(ra.protocol_version, 1);
  assert.equal(ra.capacity, 3);
  assert.deepEqual(typeof ra.engines === 'string' ? JSON.parse(ra.engines) : ra.engines, engines);
  assert.ok(Date.now() - new Date(ra.last_seen_at).getTime() < 60_000, 'a hello stamps its last-seen time');
  assert.equal(rb.name, 'ünïcødé 名前 ');
  assert.equal(rb.cli_version, '');
  assert.equal(rb.protocol_version, 2);
  assert.deepEqual(typeof rb.engines === 'string' ? JSON.parse(rb.engines) : rb.engines, []);
  assert.equal(new Date(rc.last_seen_at).getTime(), seenAt, 'a last-seen time alone, to the millisecond');
  assert.equal(rc.name, 'c', 'a host only seen keeps its hello');
});
