// The shape of what a paired host sends, beyond each field's type (found by an audit of the host
// channel): a tool input nested thousands deep (≈ 10 KB) crashed the hub — JSON.stringify overflowed
// the stack in a promise nothing caught, and the host's open run did it again after every restart;
// an engine object carried any extra field (megabytes of it, kept per distinct list in memory and
// written to the database) or a map key decoded as a lone surrogate, which PostgreSQL's JSON refuses
// and so failed the hello write of every host in the same batch. Each is refused or repaired at
// decoding, before any domain sees the frame.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from '@msgpack/msgpack';
import { decodeHostFrame, encodeFrame, DEPTH_MAX } from '../host-protocol/index.js';
import { CloseCodes, PROTOCOL_VERSION } from '../host-protocol/version.js';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, CLAUDE_ENGINE } from './helpers/host.js';

/** `[[[ … 0 … ]]]`, `depth` arrays deep. */
function nested(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}
/** MessagePack of `depth` nested one-element arrays around a 0, written by hand (the encoder stops at 100). */
const nestedBytes = (depth: number) => Buffer.concat([Buffer.alloc(depth, 0x91), Buffer.from([0x00])]);
/** A run.message whose one tool_use block's input is `input` (bytes spliced in where a marker was). */
function messageWithInput(inputBytes: Buffer): Buffer {
  const b = Buffer.from(encode({ t: 'run.message', runId: 'r1', role: 'assistant', blocks: [{ kind: 'tool_use', toolName: 'Bash', toolId: 't1', toolInput: 'MARK' }] }));
  const at = b.indexOf(Buffer.from([0xa4, ...Buffer.from('MARK')]));
  return Buffer.concat([b.subarray(0, at), inputBytes, b.subarray(at + 5)]);
}
const helloOf = (engine: object) => encodeFrame({ t: 'hello', v: PROTOCOL_VERSION, cli: 'x-1', name: 'h', capacity: 1, engines: [engine as typeof CLAUDE_ENGINE] });

test('a frame nested deeper than DEPTH_MAX is refused at decoding; a real tool input\'s depth passes', () => {
  assert.equal(decodeHostFrame(messageWithInput(Buffer.from(encode(nested(20))))).error, undefined);
  for (const depth of [DEPTH_MAX, 1000, 10_000, 100_000]) {
    const d = decodeHostFrame(messageWithInput(nestedBytes(depth)));
    assert.match(d.error ?? '', /nested deeper than/, `depth ${depth}`);
  }
  // Maps count as arrays do.
  let deepMap: unknown = 1;
  for (let i = 0; i < DEPTH_MAX; i++) deepMap = { k: deepMap };
  assert.match(decodeHostFrame(messageWithInput(Buffer.from(encode(deepMap, { maxDepth: 1000 })))).error ?? '', /nested deeper than/);
});

test('a map key decoded as a lone surrogate is repaired (U+FFFD), as string values are', () => {
  const b = messageWithInput(Buffer.from(encode({ QQQ: 1, ok: 'v' })));
  const at = b.indexOf(Buffer.from('QQQ'));
  b[at] = 0xed; b[at + 1] = 0xa0; b[at + 2] = 0x80; // U+D800 in CESU-8: no valid UTF-8 holds it
  const d = decodeHostFrame(b);
  assert.equal(d.error, undefined);
  const input = (d.frame as any).blocks[0].toolInput;
  assert.deepEqual(Object.keys(input).map((k) => k.isWellFormed()), [true, true]);
  assert.ok(JSON.stringify(input).includes('\ufffd'), JSON.stringify(input));
});

test('an engine carries its three fields and nothing else', () => {
  assert.equal(decodeHostFrame(helloOf({ ...CLAUDE_ENGINE, version: '2.0.1' })).error, undefined);
  assert.match(decodeHostFrame(helloOf({ ...CLAUDE_ENGINE, extra: 'x'.repeat(900_000) })).error ?? '', /invalid frame "hello"/);
  assert.match(decodeHostFrame(encodeFrame({ t: 'engines', engines: [{ ...CLAUDE_ENGINE, extra: 1 } as typeof CLAUDE_ENGINE] })).error ?? '', /invalid frame "engines"/);
});

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t?.close());

test('a host sending a frame too deep loses its own channel (BAD_FRAME); the hub keeps serving', async () => {
  const u = await t.user('deep-host');
  const { credential } = await pairHost(t, u.key);
  const h = await connectFakeHost(t, credential);
  h.send(messageWithInput(nestedBytes(10_000)));
  assert.equal((await h.closed).code, CloseCodes.BAD_FRAME.code);
  assert.equal((await t.api('GET', '/api/v1/health')).status, 200);
  const again = await connectFakeHost(t, credential);
  again.close();
});

test('an HTTP heartbeat with engines holding extra or deep fields → 400; nothing is kept', async () => {
  const u = await t.user('deep-heartbeat');
  const { credential, hostId } = await pairHost(t, u.key);
  const beat = (body: string) => fetch(`${t.url}/api/v1/hosts/heartbeat`, { method: 'POST', headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' }, body });
  const deep = `{"engines":[{"id":"claude-code","displayName":"x","deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}]}`;
  for (const body of [deep, JSON.stringify({ engines: [{ ...CLAUDE_ENGINE, extra: 'x'.repeat(100_000) }] })]) {
    const r = await beat(body);
    assert.equal(r.status, 400, await r.text());
  }
  assert.equal((await beat(JSON.stringify({ engines: [CLAUDE_ENGINE] }))).status, 200);
  const engines = await eventually(async () => {
    const r = await t.api('GET', `/api/v1/hosts/${hostId}/engines`, { token: u.key });
    return r.status === 200 && r.body.data.length ? r.body.data : undefined;
  });
  assert.deepEqual(engines.map((e: any) => Object.keys(e).sort()), [['displayName', 'id']]);
  assert.equal((await t.api('GET', '/api/v1/health')).status, 200);
});
