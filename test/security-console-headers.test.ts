// The console page is the one HTML the hub serves to browsers: it holds the signed-in user's session
// and buttons that spend tokens, approve agents or change the phone. Served without a policy, any
// site could frame it (clickjacking) and nothing limited where its page could load scripts from or
// send data to. It now names itself as the only source, refuses to be framed, and sends no path
// (invitation links carry a token in theirs) to other sites.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

for (const path of ['/', '/sessions/ses_x', '/invite/some-token']) {
  test(`${path}: a content security policy of its own origin, no framing, no referrer path to other sites`, async () => {
    const r = await fetch(t.url + path);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/html/);
    const csp = r.headers.get('content-security-policy') ?? '';
    for (const d of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "object-src 'none'", "form-action 'self'"]) assert.ok(csp.includes(d), `${d} in ${JSON.stringify(csp)}`);
    assert.ok(!csp.includes('unsafe-inline') && !csp.includes('unsafe-eval'), csp);
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
    assert.equal(r.headers.get('referrer-policy'), 'same-origin');
    await r.arrayBuffer();
  });
}
