// A line about a failed statement never carries the statement's values, whatever the error's code.
// errorFields (src/log.ts) left the statement out only when the error carried a SQLSTATE, and knex puts
// the statement (MikroORM writes its values in) before every driver error's message. A connection lost
// mid-statement (PostgreSQL restarting or failing over, a network drop) rejects with "Connection terminated
// unexpectedly", no code: the line was the whole statement, twice (message and stack). The mid-run write of a
// run's rows then logged the run's output (tool results: files the engine read, other users' sessions) to
// the operator's logs. Now the driver's own message is kept where the statement failed (db/orm.ts) and is
// all a line says of it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { createLogger } from '../src/log.js';
import type { AcceptedRun } from '../src/client/index.js';

const SECRET_OUTPUT = 'DB_PASSWORD=private-output-7c41e9d2';
let t: TestHub;
let host: FakeHost | undefined;
const lines: string[] = [];

before(async () => {
  const log = createLogger('debug', {}, (l) => void lines.push(l));
  t = await startTestHub({ logLevel: 'debug' }, {}, { log });
});
after(async () => {
  host?.close();
  await t?.close();
});

test('a run\'s rows whose write lost its database connection: the warn line does not carry the rows', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'drop');
  host = await connectFakeHost(t, credential, { capacity: 1 });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'drop', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  (await c.sessions.create({ agentId: agent.id, content: 'read my .env' })) as AcceptedRun;
  const start: any = await host.next((f) => f.t === 'run.start');

  // The connection carrying the statement that writes the run's rows is lost once, after the statement went out
  // (what a PostgreSQL restart or a network drop looks like to node-postgres).
  const Client = (t.hub.ctx.orm.em.getConnection().getKnex().client as any).driver.Client;
  const query = Client.prototype.query;
  let cut = false;
  Client.prototype.query = function (this: any, ...a: any[]) {
    const text: string = typeof a[0] === 'string' ? a[0] : a[0]?.text ?? '';
    const r = query.apply(this, a);
    if (!cut && text.includes(SECRET_OUTPUT)) {
      cut = true;
      this.connection.stream.destroy();
    }
    return r;
  };
  try {
    host.send({ t: 'run.message', runId: start.runId, role: 'user', blocks: [{ kind: 'tool_result', toolId: 'toolu_1', content: `cat .env\n${SECRET_OUTPUT}\n` }] } as any);
    await eventually(async () => lines.some((l) => JSON.parse(l).msg === 'run rows not written') || undefined, 15_000, 50);
  } finally {
    Client.prototype.query = query;
  }
  assert.ok(cut, 'the statement carrying the rows was seen (else this test shows nothing)');
  const line = lines.find((l) => JSON.parse(l).msg === 'run rows not written')!;
  assert.ok(!line.includes(SECRET_OUTPUT), `the warn line carries the run's output: ${line.slice(0, 600)}…`);
  assert.ok(!/insert into session_messages/.test(line), 'nor the statement');
});
