// HEAD is served for every GET route (router.ts; `Allow` lists it), and was answered exactly as the GET:
// `HEAD /api/v1/me` wrote the JSON body after the head, and `HEAD …/events` opened an event stream. An answer
// to HEAD carries no content (RFC 9110 §9.3.2): a client reading the connection right takes those bytes for
// the start of the next answer on it, a malformed answer to a request that did nothing wrong (fetch hides it
// by dropping the socket). Now: the head only (Content-Length the GET's), and no stream opened.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, type FakeHost } from './helpers/host.js';

let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  host?.close();
  await t.close();
});

/** Writes `request` on a fresh connection, collects what comes back for `ms`, then closes. */
function rawExchange(request: string, ms = 600): Promise<string> {
  return new Promise((resolve, reject) => {
    const u = new URL(t.url);
    const c = net.connect(Number(u.port), u.hostname);
    let out = '';
    c.setEncoding('latin1');
    c.on('data', (d) => (out += d));
    c.on('error', reject);
    c.write(request);
    setTimeout(() => {
      c.destroy();
      resolve(out);
    }, ms);
  });
}

/** Splits the first response into its head and whatever bytes follow the blank line. */
function split(raw: string): { head: string; rest: string } {
  const i = raw.indexOf('\r\n\r\n');
  assert.ok(i > 0, `a response head came back: ${JSON.stringify(raw.slice(0, 200))}`);
  return { head: raw.slice(0, i), rest: raw.slice(i + 4) };
}

test('HEAD of an enveloped GET route (200 and 404) → headers only, no body bytes on the connection', async () => {
  const u = await t.user();
  for (const path of ['/api/v1/me', '/api/v1/health', '/api/v1/no-such-endpoint']) {
    const raw = await rawExchange(`HEAD ${path} HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer ${u.key}\r\n\r\n`);
    const { head, rest } = split(raw);
    assert.match(head, /^HTTP\/1\.1 (200|404) /, `HEAD ${path}: ${head}`);
    assert.equal(rest, '', `HEAD ${path} must carry no content, got ${rest.length} bytes: ${JSON.stringify(rest.slice(0, 120))}`);
  }
});

test('HEAD of the session event stream → headers only; no stream is opened', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'head-host');
  host = await connectFakeHost(t, credential);
  const a = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'head', scope: 'private', hostId, engine: 'claude-code' } });
  assert.equal(a.status, 201, a.text);
  const s = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId: a.body.data.id } });
  assert.equal(s.status, 201, s.text);
  const raw = await rawExchange(`HEAD /api/v1/sessions/${s.body.data.id}/events HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer ${u.key}\r\n\r\n`);
  const { head, rest } = split(raw);
  assert.match(head, /^HTTP\/1\.1 200 /, head);
  assert.equal(rest, '', `HEAD of the event stream must carry no content, got: ${JSON.stringify(rest.slice(0, 200))}`);
});
