// Hole 15: applying or reverting model settings never races a starting run.
// A host must never write its settings while it runs a turn: a message
// accepted for the host and then an apply → 409 (host busy), every time; an
// apply in flight and then a message → the message waits and its run.start
// reaches the host only after the settings reply; both at once → one or the
// other, never overlapping. Checked from the host's side (a protocol client
// that records every run.start and settings.apply), on one node and across
// two nodes sharing PostgreSQL and Redis.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import { apiError } from './helpers/api-error.js';
import { ApiError, type AcceptedRun, type SessionView } from '../src/client/index.js';

const ROUNDS = 20;
const SETTINGS_REPLY_MS = 60;
const SECRET = 'settings-race-shared-secret-0123456789';

/**
 * A host that holds every run until the test ends it, answers settings after a delay,
 * and records any overlap of the two (the thing that must never happen).
 */
class WatchedHost {
  h!: FakeHost;
  hostId!: string;
  active = new Set<string>();
  starts: string[] = [];
  inSettings = 0;
  /** Settings replies sent so far. */
  settingsDone = 0;
  settingsSeen = 0;
  violations: string[] = [];
  /**
   * While set, settings replies wait for releaseSettings(): the test, not a timer, decides when the write
   * ends (a send slower than the timer on a loaded machine would otherwise find the lease already gone).
   */
  holdSettings = false;
  private held: Array<() => void> = [];

  async connect(t: { url: string }, credential: string): Promise<this> {
    this.h = await connectFakeHost(t, credential, {
      capacity: 2,
      answer: (f) => {
        if (f.t !== 'settings.apply') return undefined;
        this.settingsSeen++;
        if (this.active.size) this.violations.push(`settings.apply while running ${[...this.active].join(',')}`);
        this.inSettings++;
        const reply = () => {
          this.inSettings--;
          this.settingsDone++;
          this.h.send({ t: 'reply', id: f.id, ok: true, data: { applied: true } });
        };
        if (this.holdSettings) this.held.push(reply);
        else setTimeout(reply, SETTINGS_REPLY_MS);
        return undefined;
      },
    });
    this.hostId = this.h.hostId!;
    this.h.ws.on('message', (data: Buffer) => {
      const f = decodeHubFrame(data).frame as any;
      if (f?.t !== 'run.start') return;
      if (this.inSettings) this.violations.push(`run.start ${f.runId} while settings were being written`);
      this.starts.push(f.runId);
      this.active.add(f.runId);
    });
    return this;
  }

  /** Sends the settings replies held so far and stops holding. */
  releaseSettings(): void {
    this.holdSettings = false;
    for (const reply of this.held.splice(0)) reply();
  }

  end(runId: string): void {
    this.active.delete(runId);
    this.h.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  }

  /** Ends every run the host holds. */
  endAll(): void {
    for (const r of [...this.active]) this.end(r);
  }
}

interface Node {
  client: TestHub['client'];
  hub: TestHub['hub'];
}

/** A call's outcome as a status: 200 when it succeeded, else the ApiError's status and code. */
const outcome = (p: Promise<unknown>) =>
  p.then(() => ({ status: 200, code: undefined as string | undefined, message: '' }), (e: unknown) => {
    if (e instanceof ApiError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  });

async function setup(owner: Node, t: { url: string }, key: string) {
  const { credential } = await pairHost(t, key);
  const host = await new WatchedHost().connect(t, credential);
  const c = owner.client(key);
  const agent = await agentWhenReady(c, { name: 'race', scope: 'private', hostId: host.hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const config = await c.modelConfigs.create({ name: 'cfg', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-race-0123456789', modelName: 'm1' });
  const s = (await c.sessions.create({ agentId: agent.id })) as SessionView;
  assert.equal(s.status, 'active', 'the 201 of a session without content');
  return { host, configId: config.id, sessionId: s.id };
}

async function taskStatus(n: Node, taskId: string): Promise<string | undefined> {
  const r = await n.hub.ctx.em().getConnection().execute(`select status from session_tasks where id = ?`, [taskId]);
  return r[0]?.status;
}

/** Ends the host's runs and waits until the database holds none running (the host is idle again). */
async function settle(n: Node, host: WatchedHost) {
  let last = {};
  await eventually(async () => {
    host.endAll();
    const r = await n.hub.ctx.em().getConnection().execute(`select count(*)::int as c from session_tasks where host_id = ? and status in ('running', 'queued')`, [host.hostId]);
    // Quiet also means no settings write of the hub's own in flight or owed: a binding left pending is
    // re-synced in the background when the host goes idle, and that write would take the lease the
    // next round's apply expects to get.
    const [q] = await n.hub.ctx.em().getConnection().execute(
      `select (select settings_until from hosts where id = ?) as lease, (select count(*)::int from host_model_bindings where host_id = ? and status in ('pending', 'syncing')) as owed`,
      [host.hostId, host.hostId]);
    last = { tasks: r[0].c, inSettings: host.inSettings, lease: q.lease, owed: q.owed };
    return r[0].c === 0 && host.inSettings === 0 && q.lease === null && q.owed === 0;
  }, 15_000, 20).catch((e: Error) => {
    throw new Error(`${e.message}; last seen ${JSON.stringify(last)}`);
  });
}

/**
 * The three orders, `rounds` times each. `send` and `apply` may be different nodes.
 * Even rounds apply the configuration, odd ones revert to the default.
 */
async function race(key: string, sendVia: Node, applyVia: Node, dbVia: Node, s: Awaited<ReturnType<typeof setup>>, rounds = ROUNDS) {
  const { host, configId, sessionId } = s;
  const send = async (i: number) => {
    const m = await sendVia.client(key).sessions.send(sessionId, { content: `m${i}` });
    assert.ok(m.taskId, 'a 202 with the run');
    return m;
  };
  const apply = (i: number) => applyVia.client(key).hosts.applyModelConfig(host.hostId, i % 2 ? null : configId);

  // 1. A message accepted, then at once an apply: 409 host busy, every time.
  for (let i = 0; i < rounds; i++) {
    const m = await send(i);
    assert.equal(m.status, 'processing', JSON.stringify(m));
    // round i: an apply right after an accepted message is refused, host busy.
    await assert.rejects(apply(i), apiError(409, '4095'));
    await settle(dbVia, host);
  }

  // 2. An apply in flight (the host has the command), then a message: it waits, and starts after the settings.
  for (let i = 0; i < rounds; i++) {
    const seen = host.settingsSeen;
    host.holdSettings = true;
    const a = apply(i);
    let m: AcceptedRun;
    try {
      await eventually(async () => host.settingsSeen > seen, 10_000, 2);
      m = await send(i);
      assert.deepEqual({ status: m.status, queueReason: m.queueReason }, { status: 'queued', queueReason: 'host_capacity' }, `round ${i}`);
    } finally {
      host.releaseSettings();
    }
    await a;
    await eventually(async () => host.starts.includes(m.taskId), 10_000, 5);
    assert.equal(await taskStatus(dbVia, m.taskId), 'running');
    await settle(dbVia, host);
  }

  // 3. Both at once: either may win, never both at the host at the same time.
  const outcomes = new Set<string>();
  for (let i = 0; i < rounds; i++) {
    const [m, a] = await Promise.all([send(i), outcome(apply(i))]);
    assert.ok(a.status === 200 || (a.status === 409 && a.code === '4095'), `apply: ${a.status} ${a.code} ${a.message}`);
    if (a.status === 409) assert.equal(m.status, 'processing', 'a refused apply means the run had started');
    outcomes.add(`${a.status}/${m.status}`);
    await eventually(async () => host.starts.includes(m.taskId), 10_000, 5);
    await settle(dbVia, host);
  }
  assert.deepEqual(host.violations, [], 'a run and a settings write overlapped on the host');
  return outcomes;
}

describe('one node', () => {
  let t: TestHub;
  const open: FakeHost[] = [];
  before(async () => {
    t = await startTestHub({ rateLimitModelTestPerMinute: 0 } as any);
  });
  after(async () => {
    for (const h of open) h.close();
    await t.close();
  });

  test('accepted message then apply → 409; apply then message → waits; never overlapping', { timeout: 170_000 }, async () => {
    const u = await t.user();
    const s = await setup(t, t, u.key);
    open.push(s.host.h);
    await race(u.key, t, t, t, s);
  });
});

describe('two nodes with Redis', async () => {
  const skip = await clusterSkipReason();
  const nodes = useCluster(skip, [{ nodeId: 'race-a', secretKey: SECRET }, { nodeId: 'race-b', secretKey: SECRET }]);
  const open: FakeHost[] = [];
  after(() => {
    for (const h of open) h.close();
  });

  test('message on one node, apply on the other (both ways): same guarantees', { skip, timeout: 170_000 }, async () => {
    const [a, b] = nodes.hubs;
    const u = await a.user();
    const s = await setup(a, a, u.key); // the host's channel is on node A
    open.push(s.host.h);
    await race(u.key, a, b, a, s, ROUNDS / 2);
    await race(u.key, b, a, a, s, ROUNDS / 2);
  });

  test('a run is never dispatched while another node holds the settings lease', { skip, timeout: 60_000 }, async () => {
    const [a, b] = nodes.hubs;
    const u = await a.user();
    const s = await setup(a, a, u.key);
    open.push(s.host.h);
    for (let i = 0; i < 5; i++) {
      const seen = s.host.settingsSeen;
      s.host.holdSettings = true;
      const ap = b.client(u.key).hosts.applyModelConfig(s.host.hostId, s.configId);
      let m: AcceptedRun;
      try {
        await eventually(async () => s.host.settingsSeen > seen, 10_000, 2);
        // Node A owns the host's channel: its drain must not start the message before B's lease ends.
        m = await a.client(u.key).sessions.send(s.sessionId, { content: `lease ${i}` });
        assert.equal(m.status, 'queued', JSON.stringify(m));
      } finally {
        s.host.releaseSettings();
      }
      await ap;
      await eventually(async () => s.host.starts.includes(m.taskId), 10_000, 5);
      await settle(a, s.host);
    }
    assert.deepEqual(s.host.violations, []);
  });
});
