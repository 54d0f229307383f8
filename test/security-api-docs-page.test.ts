// The API reference page (/api/docs) is HTML on the console's origin, and it went out with none of the
// console's protective headers: it could be framed by any site (clickjacking), kept a handle for the
// page that opened it, and ran an inline script, so no policy could forbid injected ones. It now has
// the console's headers, its start script is a file of its own, and it still renders under them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { noBrowser, openConsole } from './helpers/browser.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('/api/docs: no framing, no opener handle, no sniffing, no inline script', async () => {
  const r = await fetch(t.url + '/api/docs');
  const csp = r.headers.get('content-security-policy') ?? '';
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.equal(r.headers.get('x-frame-options'), 'DENY');
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(r.headers.get('cross-origin-opener-policy'), 'same-origin');
  assert.doesNotMatch(await r.text(), /<script>/, 'no inline script');
});

test('/api/docs renders the reference under its policy', { skip: noBrowser() }, async () => {
  const tab = await openConsole(t.url, '/api/docs');
  try {
    await tab.page.locator('.swagger-ui .info .title').filter({ hasText: 'Agent Hub' }).waitFor();
    await tab.page.locator('.opblock').first().waitFor();
    assert.deepEqual(tab.pageErrors.filter((e) => /Content Security Policy|Refused/i.test(e)), [], 'nothing refused by the policy');
  } finally {
    await tab.close();
  }
});
