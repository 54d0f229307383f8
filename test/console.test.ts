// The console served by the hub: the page loads only its own bundle, assets carry
// cache headers, /api/* stays the API, unknown non-API paths answer the page.
// (No browser on this machine: the bundle is checked as served, not run.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const get = (path: string, init?: RequestInit) => fetch(t.url + path, init);

/** The local script and stylesheet the page names. */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
}

test('GET / answers the console page, loading only local assets', async () => {
  const r = await get('/');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(r.headers.get('cache-control'), 'no-cache');
  const html = await r.text();
  assert.match(html, /<div id="app">/);
  assert.doesNotMatch(html, /https?:\/\//, 'no URL to another host');
  const assets = assetsOf(html);
  assert.ok(assets.some((a) => /^\/console\/app\.[0-9a-f]{12}\.js$/.test(a)), html);
  assert.ok(assets.every((a) => a.startsWith('/console/')), html);
});

test('the bundle and stylesheet answer with their types and long cache headers', async () => {
  const html = await (await get('/')).text();
  const [js] = assetsOf(html).filter((a) => a.endsWith('.js'));
  const r = await get(js);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.match(r.headers.get('cache-control') ?? '', /max-age=31536000/);
  const body = await r.text();
  // The Preact app itself: its page texts and the client's API prefix are in the bundle.
  assert.ok(body.includes('Start a session') && body.includes('/api/v1') && body.includes('agent-hub.apiKey'));
  assert.doesNotMatch(body, /from\s*["'](https?:)?\/\//, 'no import from another host');
  const [css] = assetsOf(html).filter((a) => a.endsWith('.css'));
  const c = await get(css);
  assert.equal(c.status, 200);
  assert.match(c.headers.get('content-type') ?? '', /^text\/css/);
  assert.match(c.headers.get('cache-control') ?? '', /immutable/);
  // Only the names the page uses are files; nothing else is read.
  const miss = await get('/console/..%2Fpackage.json');
  assert.equal(miss.status, 404);
  assert.equal((await miss.json()).data, null);
  assert.equal((await get('/console/app.000000000000.js')).status, 404);
});

test('unknown non-API paths answer the page; /api/* stays the API', async () => {
  const page = await get('/market/agt_x');
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<div id="app">/);
  assert.equal((await get('/sessions/s_1/deep')).status, 200);
  const health = await get('/api/v1/health');
  assert.match(health.headers.get('content-type') ?? '', /application\/json/);
  const missing = await get('/api/v1/no-such-thing');
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).code, '4041');
  assert.equal((await get('/api/nothing')).status, 404);
  // Only reads fall back to the page: other methods on unknown paths stay 404 JSON.
  const post = await get('/market/x', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(post.status, 404);
  assert.equal((await post.json()).code, '4041');
});

test('the limits the agent form shows are the ones the hub checks', async () => {
  const { LIMITS } = await import('../console/agents/limits.js');
  const { AgentWrite, AiFillBody } = await import('../src/agents/schemas.js');
  const props = (AgentWrite.schema as any).properties;
  for (const k of ['name', 'displayName', 'desc', 'cat', 'workDir', 'expectedInput', 'expectedOutput'] as const) {
    assert.equal(LIMITS[k].max, props[k].maxLength, `${k} max`);
    assert.equal(LIMITS[k].min, props[k].minLength ?? 0, `${k} min`);
  }
  assert.equal(LIMITS.tags.maxItems, props.tags.maxItems);
  assert.equal(LIMITS.tags.max, props.tags.items.maxLength);
  assert.equal(LIMITS.tags.min, props.tags.items.minLength);
  const text = (AiFillBody.schema as any).properties.text;
  assert.deepEqual([LIMITS.aiFillText.min, LIMITS.aiFillText.max], [text.minLength, text.maxLength]);
  // The form's workDir rule is the hub's (rules.ts checkWorkDir), checked on the same samples.
  const { workDirProblem } = await import('../console/agents/limits.js');
  const { checkWorkDir } = await import('../src/agents/rules.js');
  for (const w of ['', 'a', 'a/b', 'a..b/c', '/abs', '\\abs', '~/x', 'C:x', '..', '../a', 'a/../b', 'a\\..\\b', 'a/..']) {
    assert.equal(!!workDirProblem(w), !!checkWorkDir(w), JSON.stringify(w));
  }
});
