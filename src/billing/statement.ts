// Read side of the ledger: balance, the entry list and daily trends.
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { offsetOf, pageOf } from '../paging.js';
import type { LedgerType } from './entities.js';

export const RANGES = ['7d', '30d', '90d', 'all'] as const;
export type Range = (typeof RANGES)[number];
export const TREND_RANGES = ['7d', '30d', '90d'] as const;
export type TrendRange = (typeof TREND_RANGES)[number];

const DAYS: Record<Exclude<Range, 'all'>, number> = { '7d': 7, '30d': 30, '90d': 90 };

/** SQL condition on created_at for a range; 'all' has none. */
export function rangeStart(range: Range): Date | null {
  if (range === 'all') return null;
  return new Date(Date.now() - DAYS[range] * 86_400_000);
}

export function ledgerView(r: any) {
  return {
    id: r.id,
    amount: Number(r.amount),
    type: r.type,
    ref: r.ref,
    note: r.note,
    balanceAfter: Number(r.balance_after),
    createdAt: new Date(r.created_at).toISOString(),
  };
}

export class Statement {
  constructor(private readonly ctx: HubContext) {}

  async balance(userId: string) {
    const rows = await this.ctx.em().getConnection().execute(
      `select u.balance,
              coalesce((select sum(amount) from ledger_entries where user_id = u.id and amount > 0), 0) as income,
              coalesce((select -sum(amount) from ledger_entries where user_id = u.id and amount < 0), 0) as spent,
              (select max(created_at) from ledger_entries where user_id = u.id) as last_change
         from users u where u.id = ?`,
      [userId],
    );
    if (!rows.length) throw fail('NOT_FOUND', 'user not found');
    const r = rows[0];
    return {
      balance: Number(r.balance),
      totalIncome: Number(r.income),
      totalSpent: Number(r.spent),
      unit: 'token',
      updatedAt: r.last_change ? new Date(r.last_change).toISOString() : null,
    };
  }

  async ledger(userId: string, q: { type?: LedgerType; range: Range; page: number; pageSize: number }) {
    const where = ['user_id = ?'];
    const params: unknown[] = [userId];
    if (q.type) where.push('type = ?'), params.push(q.type);
    const since = rangeStart(q.range);
    if (since) where.push('created_at >= ?'), params.push(since.toISOString());
    const conn = this.ctx.em().getConnection();
    const w = where.join(' and ');
    const [{ n }] = await conn.execute(`select count(*)::int as n from ledger_entries where ${w}`, params);
    const rows = await conn.execute(
      `select * from ledger_entries where ${w} order by created_at desc, id desc limit ? offset ?`,
      [...params, q.pageSize, offsetOf(q.page, q.pageSize)],
    );
    return pageOf(rows.map(ledgerView), n, q.page, q.pageSize);
  }

  /** One point per UTC day of the range, zero-filled: income (positive entries), spent (negative, as a positive number), net. */
  async trends(userId: string, q: { range: TrendRange; type?: LedgerType }) {
    const days = DAYS[q.range];
    const params: unknown[] = [days - 1, userId, days - 1];
    let typeCond = '';
    if (q.type) (typeCond = 'and type = ?'), params.push(q.type);
    const rows = await this.ctx.em().getConnection().execute(
      `with days as (
         select generate_series((now() at time zone 'utc')::date - (?::int), (now() at time zone 'utc')::date, interval '1 day')::date as d),
       e as (
         select (created_at at time zone 'utc')::date as d, amount from ledger_entries
          where user_id = ? and created_at >= ((now() at time zone 'utc')::date - (?::int)) at time zone 'utc' ${typeCond})
       select to_char(days.d, 'YYYY-MM-DD') as date,
              coalesce(sum(e.amount) filter (where e.amount > 0), 0) as income,
              coalesce(-sum(e.amount) filter (where e.amount < 0), 0) as spent,
              count(e.amount)::int as entries
         from days left join e on e.d = days.d group by days.d order by days.d`,
      params,
    );
    const points = rows.map((r: any) => ({ date: r.date, income: Number(r.income), spent: Number(r.spent), net: Number(r.income) - Number(r.spent), entries: r.entries }));
    const totals = points.reduce((a: any, p: any) => ({ income: a.income + p.income, spent: a.spent + p.spent, net: a.net + p.net }), { income: 0, spent: 0, net: 0 });
    return { range: q.range, type: q.type ?? null, points, totals };
  }
}
