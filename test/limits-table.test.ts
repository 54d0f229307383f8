// The spec's Limits table, one row each: at its bound accepted, one past it
// 400 (issue 14 part 9). Rows that are not a 400 when exceeded (waiting
// messages → queue full, timeouts, the cost rule) are covered by their own
// tests (sessions-api, model-configs-probe, economy-charges).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';

let t: TestHub;
let user: { id: string; key: string };
let hostId: string;
let sessionId: string;
let agentPath: string;
let agentId: string;
let live: FakeHost;
const LONG_ENGINE = 'e'.repeat(80);

before(async () => {
  t = await startTestHub();
  user = await t.user('limits');
  hostId = await seedHost(t, user.id, ['claude-code', LONG_ENGINE]);
  // Messages need an online host: a fake one that takes runs and never ends them.
  const paired = await pairHost(t, user.key);
  live = await connectFakeHost(t, paired.credential, { capacity: 1 });
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: user.key, body: { name: 'lim', hostId: paired.hostId, engine: 'claude-code' } });
    return r.status === 201 ? r : undefined;
  }, 5000, 20);
  agentId = a.body.data.id;
  agentPath = encodeURIComponent(agentId);
  sessionId = (await t.api('POST', '/api/v1/sessions', { token: user.key, body: { agentId: a.body.data.id } })).body.data.id;
});
after(async () => {
  live.close();
  await t.close();
});

/** A valid usageStatus list exactly `n` characters long. */
function statusList(n: number): string {
  const words = ['draft', 'online', 'offline', 'reviewing'];
  const go = (left: number, acc: string[]): string[] | undefined => {
    if (left === 0) return acc;
    for (const w of words) {
      const cost = w.length + (acc.length ? 1 : 0);
      if (cost <= left) {
        const r = go(left - cost, [...acc, w]);
        if (r) return r;
      }
    }
    return undefined;
  };
  return go(n, [])!.join(',');
}

const s = (n: number, c = 'a') => c.repeat(n);
const agent = (fields: Record<string, unknown>) => ({ method: 'POST', path: '/api/v1/agents', body: { name: 'x', hostId, engine: 'claude-code', ...fields } });
type Req = { method: string; path: string; body?: unknown; headers?: Record<string, string>; admin?: boolean };
type Row = [limit: string, atBound: Req, pastIt: Req];

const ROWS = (): Row[] => [
  ['market page size 100', { method: 'GET', path: '/api/v1/agents?pageSize=100' }, { method: 'GET', path: '/api/v1/agents?pageSize=101' }],
  ['market page size ≥ 1', { method: 'GET', path: '/api/v1/agents?pageSize=1' }, { method: 'GET', path: '/api/v1/agents?pageSize=0' }],
  ['mine page size 100', { method: 'GET', path: '/api/v1/agents/mine?pageSize=100' }, { method: 'GET', path: '/api/v1/agents/mine?pageSize=101' }],
  ['sessions page size 50', { method: 'GET', path: '/api/v1/sessions?pageSize=50' }, { method: 'GET', path: '/api/v1/sessions?pageSize=51' }],
  ['session read messageLimit 50', { method: 'GET', path: `/api/v1/sessions/${sessionId}?messageLimit=50` }, { method: 'GET', path: `/api/v1/sessions/${sessionId}?messageLimit=51` }],
  ['messages limit 50', { method: 'GET', path: `/api/v1/sessions/${sessionId}/messages?limit=50` }, { method: 'GET', path: `/api/v1/sessions/${sessionId}/messages?limit=51` }],
  ['content 100000', { method: 'POST', path: `/api/v1/sessions/${sessionId}/messages`, body: { content: s(100000) } }, { method: 'POST', path: `/api/v1/sessions/${sessionId}/messages`, body: { content: s(100001) } }],
  ['content ≥ 1', { method: 'POST', path: `/api/v1/sessions/${sessionId}/messages`, body: { content: 'a' } }, { method: 'POST', path: `/api/v1/sessions/${sessionId}/messages`, body: { content: '' } }],
  ['agent name 80', agent({ name: s(80, 'n') }), agent({ name: s(81, 'n') })],
  ['agent name ≥ 1', agent({ name: 'n' }), agent({ name: '' })],
  ['agent displayName 80', agent({ displayName: s(80) }), agent({ displayName: s(81) })],
  ['agent engine 80', agent({ engine: LONG_ENGINE }), agent({ engine: s(81, 'e') })],
  ['agent desc 1000', agent({ desc: s(1000) }), agent({ desc: s(1001) })],
  ['agent tags 20 items', agent({ tags: Array.from({ length: 20 }, (_, i) => `t${i}`) }), agent({ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) })],
  ['agent tag 30 characters', agent({ tags: [s(30)] }), agent({ tags: [s(31)] })],
  ['agent tag ≥ 1 character', agent({ tags: ['a'] }), agent({ tags: [''] })],
  ['agent cat 50', agent({ cat: s(50) }), agent({ cat: s(51) })],
  ['agent hostId 120', agent({ hostId, engine: 'claude-code' }), agent({ hostId: s(121, 'h') })],
  ['agent path id 120', { method: 'GET', path: `/api/v1/agents/${agentPath}/manage` }, { method: 'GET', path: `/api/v1/agents/${s(121)}/manage` }],
  ['agent workDir 500', agent({ workDir: s(500, 'w') }), agent({ workDir: s(501, 'w') })],
  ['agent expectedInput 500', agent({ expectedInput: s(500) }), agent({ expectedInput: s(501) })],
  ['agent expectedOutput 500', agent({ expectedOutput: s(500) }), agent({ expectedOutput: s(501) })],
  ['mine keyword 100', { method: 'GET', path: `/api/v1/agents/mine?keyword=${s(100)}` }, { method: 'GET', path: `/api/v1/agents/mine?keyword=${s(101)}` }],
  ['mine usageStatus 100', { method: 'GET', path: `/api/v1/agents/mine?usageStatus=${statusList(100)}` }, { method: 'GET', path: `/api/v1/agents/mine?usageStatus=${statusList(101)}` }],
  ['idempotency-key 128',
    { method: 'POST', path: '/api/v1/sessions', body: { agentId }, headers: { 'idempotency-key': s(128, 'k') } },
    { method: 'POST', path: '/api/v1/sessions', body: { agentId }, headers: { 'idempotency-key': s(129, 'k') } }],
  ['token-pack qty 99', { method: 'POST', path: '/api/v1/orders/token-pack', body: { qty: 99, payMethod: 'alipay' } }, { method: 'POST', path: '/api/v1/orders/token-pack', body: { qty: 100, payMethod: 'alipay' } }],
  ['token-pack qty ≥ 1', { method: 'POST', path: '/api/v1/orders/token-pack', body: { qty: 1, payMethod: 'alipay' } }, { method: 'POST', path: '/api/v1/orders/token-pack', body: { qty: 0, payMethod: 'alipay' } }],
  ['redeem qty 10', { method: 'POST', path: '/api/v1/store/redeem', body: { productId: 'coffee-voucher', qty: 10 } }, { method: 'POST', path: '/api/v1/store/redeem', body: { productId: 'coffee-voucher', qty: 11 } }],
  ['grant-token qty 100', { method: 'POST', path: '/api/v1/admin/users/{me}/grant-token', body: { qty: 100 }, admin: true }, { method: 'POST', path: '/api/v1/admin/users/{me}/grant-token', body: { qty: 101 }, admin: true }],
];

test('each limit of the spec\'s table: at its bound accepted, one past it 400', async () => {
  const failures: string[] = [];
  for (const [limit, ok, past] of ROWS()) {
    for (const [r, want] of [[ok, 'accepted'], [past, 'refused']] as const) {
      const res = await t.api(r.method, r.path.replace('{me}', user.id), { token: r.admin ? t.adminKey : user.key, body: r.body, headers: r.headers });
      const good = want === 'accepted' ? res.status >= 200 && res.status < 300 : res.status === 400;
      if (!good) failures.push(`${limit} (${want}): ${res.status} ${res.text.slice(0, 160)}`);
    }
  }
  assert.deepEqual(failures, []);
});
