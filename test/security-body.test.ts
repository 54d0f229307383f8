// Issue 10, hole 17: a body over the limit gets its 413 envelope, every time.
// A raw client keeps sending a body far over the limit; the hub must answer
// 413 and let the client read it (no reset that throws the answer away).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';

const LIMIT = 4096;
let t: TestHub;
before(async () => {
  t = await startTestHub({ bodyLimit: LIMIT });
});
after(() => t.close());

/** Sends `size` bytes of body (declared with Content-Length, or chunked) and returns all the client could read. */
function sendBig(size: number, opts: { chunked?: boolean; expect?: boolean; waitForContinue?: boolean } = {}): Promise<{ text: string; error?: string }> {
  const u = new URL(t.url);
  return new Promise((resolve) => {
    let text = '';
    let error: string | undefined;
    const c = net.connect(Number(u.port), u.hostname, () => {
      const head = [`POST /api/v1/me/keys HTTP/1.1`, `Host: ${u.host}`, `Authorization: Bearer ${t.adminKey}`, 'Content-Type: application/json'];
      head.push(opts.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`);
      if (opts.expect) head.push('Expect: 100-continue');
      c.write(head.join('\r\n') + '\r\n\r\n');
      if (opts.waitForContinue) return;
      const piece = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const pump = () => {
        while (sent < size) {
          const n = Math.min(piece.length, size - sent);
          sent += n;
          const data = opts.chunked ? Buffer.concat([Buffer.from(n.toString(16) + '\r\n'), piece.subarray(0, n), Buffer.from('\r\n')]) : piece.subarray(0, n);
          if (!c.write(data)) return void c.once('drain', pump);
        }
        if (opts.chunked) c.write('0\r\n\r\n');
      };
      pump();
    });
    c.on('data', (d) => {
      text += d.toString('latin1');
      if (opts.waitForContinue || complete(text)) c.destroy();
    });
    c.on('error', (e) => (error = (e as NodeJS.ErrnoException).code ?? e.message));
    c.on('close', () => resolve({ text, error }));
    c.setTimeout(15_000, () => c.destroy());
  });
}

/** True once a whole non-1xx answer (head and Content-Length body) has arrived. */
function complete(text: string): boolean {
  const body = text.replace(/^HTTP\/1\.1 1\d\d [^\r]*\r\n\r\n/, '');
  const i = body.indexOf('\r\n\r\n');
  if (i < 0) return false;
  const len = /content-length: *(\d+)/i.exec(body.slice(0, i));
  return !!len && body.length >= i + 4 + Number(len[1]);
}

function envelopeOf(text: string): any {
  const i = text.indexOf('\r\n\r\n');
  assert.ok(i > 0, `no complete answer: ${JSON.stringify(text.slice(0, 200))}`);
  return JSON.parse(text.slice(i + 4, text.indexOf('}', i) + 1));
}

test('a body declared far over the limit: the client reads the 413 envelope, 20 times out of 20', async () => {
  for (let i = 0; i < 20; i++) {
    const r = await sendBig(4 * 1024 * 1024);
    assert.match(r.text, /^HTTP\/1\.1 413 /, `attempt ${i}: ${r.error ?? ''} ${JSON.stringify(r.text.slice(0, 100))}`);
    assert.equal(envelopeOf(r.text).code, '4130');
  }
});

test('a chunked body far over the limit: the client reads the 413 envelope, 20 times out of 20', async () => {
  for (let i = 0; i < 20; i++) {
    const r = await sendBig(4 * 1024 * 1024, { chunked: true });
    assert.match(r.text, /^HTTP\/1\.1 413 /, `attempt ${i}: ${r.error ?? ''} ${JSON.stringify(r.text.slice(0, 100))}`);
    assert.equal(envelopeOf(r.text).code, '4130');
  }
});

test('the hub still answers on the same port after oversized uploads (a small request works)', async () => {
  const r = await t.api('GET', '/api/v1/me', { token: t.adminKey });
  assert.equal(r.status, 200);
});

test('Expect: 100-continue with a declared length over the limit → 413 at once, without "100 Continue"', { todo: 'uWebSockets.js 20.30 writes "HTTP/1.1 100 Continue" itself when it parses the Expect header, before any handler runs; the hub cannot prevent it (docs/decisions.md)' }, async () => {
  const r = await sendBig(4 * 1024 * 1024, { expect: true, waitForContinue: true });
  assert.doesNotMatch(r.text, /100 Continue/);
  assert.match(r.text, /^HTTP\/1\.1 413 /);
});
