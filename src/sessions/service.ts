// Session use cases: open, list, read, change, delete, history, cost. Sending
// messages, the queue and abort live in messaging.ts. Every query is scoped
// by user: another account's session reads as absent (404).
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { countSessionToday, enforceQuota } from '../billing/quotas.js';
import { newId } from '../ids.js';
import { HISTORY_PAGE_MAX_BYTES } from '../limits.js';
import { pageOf, offsetOf } from '../paging.js';
import { resolveUsableAgent, recordSessionOpened, notifyAgentChanged, requireMode, defaultModeFor, modeFactsOf, type UsableAgent } from '../agents/usage.js';
import { one, rows, tx, likeEscape, marks, type Em } from './sql.js';
import { sessionView, messageView, type SessionRow, type MessageRow } from './views.js';
import { bodyHash, findAnswer, storeAnswer, IdempotencyRace, type StoredAnswer } from './idempotency.js';
import type { Messaging, SendResult, SendOptions } from './messaging.js';
import type { AccountStorage } from './account-storage.js';

export type Mode = 'default' | 'accept-edits' | 'auto' | 'plan';
export type Effort = 'low' | 'default' | 'medium' | 'high';

export interface CreateInput {
  agentId: string;
  title?: string;
  mode?: Mode;
  effort?: Effort;
  content?: string;
  options?: SendOptions;
}

export type CreateResult =
  | { kind: 'session'; session: ReturnType<typeof sessionView> }
  | { kind: 'sent'; send: SendResult }
  | { kind: 'replay'; answer: StoredAnswer };

export interface ListQuery {
  agentId?: string;
  keyword?: string;
  q?: string;
  sort?: 'lastMsgAt' | '-createdAt' | 'createdAt';
  page: number;
  pageSize: number;
}

const PENDING = `(select count(*) from session_tasks t where t.session_id = s.id and t.status = 'queued') as pending`;
const SORTS = {
  lastMsgAt: 'coalesce(s.last_msg_at, s.created_at) desc, s.id desc',
  '-createdAt': 's.created_at desc, s.id desc',
  createdAt: 's.created_at asc, s.id asc',
} as const;

/** A title from the first line of the first message, or a neutral default. */
export function titleFrom(content: string | undefined): string {
  const line = (content ?? '').split('\n').map((l) => l.trim()).find((l) => l) ?? '';
  if (!line) return 'New session';
  return line.length > 50 ? line.slice(0, 50) + '…' : line;
}

export class SessionService {
  constructor(
    private readonly ctx: HubContext,
    private readonly messaging: Messaging,
    private readonly storage: AccountStorage,
  ) {}

  private em(): Em {
    return this.ctx.em() as unknown as Em;
  }

  /** The caller's session row (with its queued count), or 404. */
  async row(userId: string, id: string, em = this.em()): Promise<SessionRow> {
    const r = await one<SessionRow>(em, `select s.*, ${PENDING} from sessions s where s.id = ? and s.user_id = ?`, [id, userId]);
    if (!r) throw fail('NOT_FOUND', 'session not found');
    return r;
  }

  async create(userId: string, input: CreateInput, idemKey?: string, beforeDispatch?: (sessionId: string) => void): Promise<CreateResult> {
    const hash = idemKey ? bodyHash(input) : '';
    if (idemKey) {
      const prior = await findAnswer(this.em(), userId, idemKey, hash);
      if (prior) return { kind: 'replay', answer: prior };
    }
    const agent = await resolveUsableAgent(this.ctx, userId, input.agentId);
    await enforceQuota(this.ctx, userId, 'sessionsPerDay');
    await this.storage.assertRoom(userId); // 409 when the account's sessions hold its bound
    // Modes above the owner's ceiling for this user: 403, nothing stored (agents/modes.ts).
    requireMode(agent, userId, input.mode);
    requireMode(agent, userId, input.options?.permissionMode);
    const mode = input.mode ?? defaultModeFor(agent, userId);
    const id = newId('ses');
    const insert = async (t: Em) => {
      await rows(t,
        `insert into sessions (id, user_id, agent_id, agent_name, title, mode, effort, last_active_at) values (?, ?, ?, ?, ?, ?, ?, now())`,
        [id, userId, agent.id, agent.displayName, input.title ?? titleFrom(input.content), mode, input.effort ?? 'default']);
      await recordSessionOpened(t, agent.id, userId);
      await countSessionToday(this.ctx, t, userId);
    };
    try {
      if (input.content === undefined) {
        const session = await tx(this.em(), async (t) => {
          await insert(t);
          const view = sessionView(await this.row(userId, id, t));
          if (idemKey) await storeAnswer(t, userId, idemKey, hash, { status: 201, body: view });
          return view;
        });
        notifyAgentChanged(this.ctx.bus, agent.id);
        return { kind: 'session', session };
      }
      const send = await this.messaging.send(userId, id, input.content, input.options ?? {}, {
        agent,
        prepare: insert,
        record: idemKey ? (t, body) => storeAnswer(t, userId, idemKey, hash, { status: 202, body }) : undefined,
        beforeDispatch,
      });
      notifyAgentChanged(this.ctx.bus, agent.id);
      return { kind: 'sent', send };
    } catch (e) {
      if (!(e instanceof IdempotencyRace)) throw e;
      const prior = await findAnswer(this.em(), userId, idemKey!, hash);
      if (!prior) throw fail('CONFLICT', 'a request with this idempotency-key is in progress');
      return { kind: 'replay', answer: prior };
    }
  }

  async list(userId: string, q: ListQuery) {
    const where = ['s.user_id = ?'];
    const params: unknown[] = [userId];
    if (q.agentId) {
      where.push('s.agent_id = ?');
      params.push(q.agentId);
    }
    const kw = (q.keyword ?? q.q ?? '').trim();
    if (kw) {
      where.push(`(s.title ilike ? escape '\\' or s.last_message ilike ? escape '\\' or s.agent_name ilike ? escape '\\')`);
      const like = `%${likeEscape(kw)}%`;
      params.push(like, like, like);
    }
    const w = where.join(' and ');
    const em = this.em();
    const total = Number((await one(em, `select count(*) as c from sessions s where ${w}`, params))!.c);
    const items = await rows<SessionRow>(em,
      `select s.*, ${PENDING} from sessions s where ${w} order by ${SORTS[q.sort ?? 'lastMsgAt']} limit ? offset ?`,
      [...params, q.pageSize, offsetOf(q.page, q.pageSize)]);
    const now = Date.now();
    return pageOf(items.map((r) => sessionView(r, now)), total, q.page, q.pageSize);
  }

  async get(userId: string, id: string, includeMessages: boolean, messageLimit: number) {
    const view: Record<string, unknown> = sessionView(await this.row(userId, id));
    if (includeMessages) {
      const h = await this.history(userId, id, { limit: messageLimit });
      view.messages = h.items;
      view.unread = 0;
    }
    return view;
  }

  async update(userId: string, id: string, patch: { title?: string; mode?: Mode; effort?: Effort }) {
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const [k, col] of [['title', 'title'], ['mode', 'mode'], ['effort', 'effort']] as const) {
      if (patch[k] !== undefined) {
        sets.push(`${col} = ?`);
        params.push(patch[k]);
      }
    }
    const em = this.em();
    if (patch.mode !== undefined) {
      const s = await one<{ agent_id: string }>(em, `select agent_id from sessions where id = ? and user_id = ?`, [id, userId]);
      const facts = s && (await modeFactsOf(this.ctx, s.agent_id));
      if (!facts) throw fail('NOT_FOUND', 'session not found');
      requireMode(facts, userId, patch.mode);
    }
    if (sets.length) {
      const r = await rows(em, `update sessions set ${sets.join(', ')}, updated_at = now() where id = ? and user_id = ? returning id`, [...params, id, userId]);
      if (!r.length) throw fail('NOT_FOUND', 'session not found');
    }
    return sessionView(await this.row(userId, id, em));
  }

  async remove(userId: string, id: string) {
    await this.row(userId, id);
    await this.messaging.abort(userId, id); // stop the engine; the rows go with the session
    await this.enginesGone(id);
    const r = await rows<{ agent_id: string }>(this.em(), `delete from sessions where id = ? and user_id = ? returning agent_id`, [id, userId]);
    if (!r.length) throw fail('NOT_FOUND', 'session not found');
    this.messaging.forget(id);
    this.storage.forget(userId); // its bytes are gone: read the account's sum again at its next message
    return { deleted: true };
  }

  /**
   * Waits, within ENGINE_STOP_GRACE_MS, until no run of the session has an engine that may still be
   * stopping (engine_until: aborted just now, or by an abort before): the host's report of what the run
   * used is charged against the run's row, which goes with the session — deleted at once, the run was free.
   */
  private async enginesGone(sessionId: string): Promise<void> {
    const deadline = Date.now() + this.ctx.config.engineStopGraceMs;
    while ((await rows(this.em(), `select 1 from session_tasks where session_id = ? and engine_until > now() limit 1`, [sessionId])).length) {
      if (Date.now() >= deadline) return;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Normalized history, oldest first; `before`/`after` are message-id cursors. Reading clears unread. */
  async history(userId: string, id: string, q: { before?: string; after?: string; limit: number }) {
    if (q.before && q.after) throw fail('VALIDATION', 'give either before or after, not both');
    const em = this.em();
    await this.row(userId, id, em);
    const cursorId = q.before ?? q.after;
    let cursor: number | undefined;
    if (cursorId) {
      const c = await one(em, `select n from session_messages where id = ? and session_id = ?`, [cursorId, id]);
      if (!c) throw fail('VALIDATION', `unknown message cursor ${JSON.stringify(cursorId.slice(0, 60))}`);
      cursor = Number(c.n);
    }
    const asc = q.after !== undefined;
    const cond = cursor === undefined ? '' : asc ? 'and n > ?' : 'and n < ?';
    // The rows' sizes first (read by PostgreSQL, not sent: a text's length is read without its bytes, a
    // tool row's JSON is measured as text); then the rows that fit the page's byte bound, one at least.
    const sized = await rows<{ n: string; b: string }>(em,
      `select n, coalesce(octet_length(content), 0) + coalesce(octet_length(tool_input::text), 0) + coalesce(octet_length(tool_result::text), 0) as b
         from session_messages where session_id = ? ${cond} order by n ${asc ? 'asc' : 'desc'} limit ?`,
      [id, ...(cursor === undefined ? [] : [cursor]), q.limit + 1]);
    let hasMore = sized.length > q.limit;
    const ns: string[] = [];
    let bytes = 0;
    for (const r of sized.slice(0, q.limit)) {
      if (ns.length && bytes + Number(r.b) > HISTORY_PAGE_MAX_BYTES) {
        hasMore = true;
        break;
      }
      ns.push(r.n);
      bytes += Number(r.b);
    }
    const page = ns.length ? await rows<MessageRow>(em, `select * from session_messages where session_id = ? and n in (${marks(ns.length)}) order by n`, [id, ...ns]) : [];
    const total = Number((await one(em, `select count(*) as c from session_messages where session_id = ?`, [id]))!.c);
    await rows(em, `update sessions set unread = 0 where id = ? and unread > 0`, [id]);
    const items = page.map(messageView);
    return { items, total, hasMore, firstId: items.length ? (items[0].id as string) : null, lastId: items.length ? (items[items.length - 1].id as string) : null };
  }

  /** Summed over the session's runs; cost = inputTokens + outputTokens × 2. */
  async cost(userId: string, id: string) {
    const s = await this.row(userId, id);
    const r = await one(this.em(),
      `select coalesce(sum(input_tokens), 0) as i, coalesce(sum(output_tokens), 0) as o from session_tasks where session_id = ?`, [id]);
    const inputTokens = Number(r.i);
    const outputTokens = Number(r.o);
    return { model: s.model ?? '', messageCount: Number(s.message_count), inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, cost: inputTokens + outputTokens * 2 };
  }
}

export type { UsableAgent };
