// API keys' last use is written in batches (accounts/authenticator.ts): one statement every 10 s for
// every key the node saw. Written as a VALUES list through MikroORM's `execute`, every id and time
// was quoted into the statement's text in the hub's process: a node that saw 40,000 keys in a window
// stalled its event loop for 290–370 ms at each flush (10,000 keys: 40–95 ms), and every request and
// host frame waited (bench/RESULTS.md, twenty-fourth session). The write now sends one array per
// column as a bind value, in chunks of a few thousand keys: each statement's text is the same short one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, wrapHubQueries } from './helpers/hub.js';

const KEYS = 10_000;

test('the batched last-use write of API keys binds its ids and times, stores each, and keeps odd ids intact', { timeout: 120_000 }, async () => {
  const t = await startTestHub();
  let restore = () => {};
  try {
    const u = await t.user('touches');
    const conn = t.hub.ctx.em().getConnection();
    const odd = `key_touch_'"\\{},NULL é`;
    await conn.execute(`insert into api_keys (id, user_id, name, hash, preview)
      select 'key_touch_' || g, ?, 'k' || g, 'touch-hash-' || g, 'ahk_…' from generate_series(1, ?) g`, [u.id, KEYS]);
    await conn.execute(`insert into api_keys (id, user_id, name, hash, preview) values (?, ?, 'odd', 'touch-hash-odd', 'ahk_…')`, [odd, u.id]);
    const at = Date.now() - 5_000;
    const auth = t.hub.auth as unknown as { touched: Map<string, number>; flushTouches(): Promise<void> };
    for (let i = 1; i <= KEYS; i++) auth.touched.set(`key_touch_${i}`, at + (i % 1000));
    auth.touched.set(odd, at);
    auth.touched.set('key_gone', at); // no such key: written nowhere, breaks nothing

    const seen: Array<{ text: string; values: unknown[] }> = [];
    restore = wrapHubQueries(t.hub, (q, send) => {
      if (/update api_keys/.test(q.text)) seen.push(q);
      return send();
    });
    await auth.flushTouches();
    restore();

    assert.ok(seen.length >= 1 && seen.length <= 3, `${seen.length} statements for ${KEYS} keys (in chunks of thousands)`);
    for (const q of seen) {
      assert.ok(q.text.length < 400, `the statement's text does not grow with the keys (${q.text.length} characters)`);
      assert.ok(!q.text.includes('key_touch_'), 'no id written into the text');
    }
    const [r] = await conn.execute(`select count(*)::int as n, count(*) filter (where last_used_at = to_timestamp((? + (substr(id, 11)::int % 1000)) / 1000.0))::int as exact
                                      from api_keys where id ~ '^key_touch_[0-9]+$' and last_used_at is not null`, [at]);
    assert.equal(r.n, KEYS, 'every key used in the window has its last use');
    assert.equal(r.exact, KEYS, 'each key has its own time, to the millisecond');
    const [o] = await conn.execute(`select last_used_at from api_keys where id = ?`, [odd]);
    assert.equal(new Date(o.last_used_at).getTime(), at);
  } finally {
    restore();
    await t.close();
  }
});
