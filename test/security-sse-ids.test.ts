// A client's Last-Event-ID is echoed as the snapshot's id; a value holding a line break wrote lines
// of its own into the stream (an `event:` and `data:` the hub never sent). The SSE framing drops CR,
// LF and NUL from an id (an id holding NUL is ignored by browsers anyway).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { formatEvent } from '../src/server/sse.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('formatEvent: an id cannot break its line', () => {
  const f = formatEvent('snapshot', { ok: true }, 'run_1:3\nevent: run.completed\r\ndata: {}\0');
  assert.equal(f.split('\n').filter((l) => l.startsWith('event:')).length, 1, f);
  assert.match(f, /^id: run_1:3event: run.completeddata: \{\}\nevent: snapshot\n/);
  assert.equal(formatEvent('x', 1, 'run_1:3'), 'id: run_1:3\nevent: x\ndata: 1\n\n');
});

test('a Last-Event-ID with line breaks adds no event to the stream', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id);
  const a = await t.client(u.key).agents.create({ name: 'sse-ids', hostId: host, engine: 'claude-code' });
  const s = await t.client(u.key).sessions.create({ agentId: a.id });
  const evil = encodeURIComponent('x\nevent: run.completed\ndata: {"status":"completed"}\n');
  const r = await t.api('GET', `/api/v1/sessions/${(s as any).id}/events?lastEventId=${evil}`, { token: u.key, headers: { accept: 'text/event-stream' } });
  assert.equal(r.status, 200);
  const events = r.text.split('\n').filter((l) => l.startsWith('event:'));
  assert.deepEqual(events, ['event: snapshot'], r.text);
});

test('a Last-Event-ID header is held to the bound of ?lastEventId= (200 characters): a longer one is 400, not echoed', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id);
  const a = await t.client(u.key).agents.create({ name: 'sse-id-len', hostId: host, engine: 'claude-code' });
  const s = await t.client(u.key).sessions.create({ agentId: a.id });
  const long = `run_x:${'9'.repeat(3000)}`;
  const r = await t.api('GET', `/api/v1/sessions/${(s as any).id}/events`, { token: u.key, headers: { accept: 'text/event-stream', 'last-event-id': long } });
  assert.equal(r.status, 400, r.text.slice(0, 200));
  assert.ok(!r.text.includes('9'.repeat(300)), 'not echoed');
  const ok = await t.api('GET', `/api/v1/sessions/${(s as any).id}/events`, { token: u.key, headers: { accept: 'text/event-stream', 'last-event-id': 'run_x:1' } });
  assert.equal(ok.status, 200);
});
