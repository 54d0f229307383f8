// Balance and the ledger table (filtered by type and range, paged).
import { useState } from 'preact/hooks';
import type { LedgerParams } from '../../src/client/index.js';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, when } from '../ui.js';
import { useLoad } from '../use-load.js';

const TYPES = ['grant', 'purchase', 'plan', 'spend', 'redeem', 'refund', 'earn'] as const;
const RANGES = ['7d', '30d', '90d', 'all'] as const;
const PAGE_SIZE = 10;

export function BalanceCard(p: { tick: number }) {
  const b = useLoad(() => client().billing.balance(), [p.tick]);
  return (
    <section class="panel" aria-labelledby="balance-h">
      <h2 id="balance-h">Balance</h2>
      <ErrorBox error={b.error} />
      {!b.data && b.loading && <Loading />}
      {b.data && (
        <>
          <p class="big" data-balance={b.data.balance}>{b.data.balance.toLocaleString()} <small>{b.data.unit}s</small></p>
          <p class="muted">Received {b.data.totalIncome.toLocaleString()} · spent {b.data.totalSpent.toLocaleString()} · last change {when(b.data.updatedAt)}</p>
        </>
      )}
    </section>
  );
}

export function LedgerTable(p: { tick: number }) {
  const [type, setType] = useState<LedgerParams['type'] | ''>('');
  const [range, setRange] = useState<NonNullable<LedgerParams['range']>>('all');
  const [page, setPage] = useState(1);
  const l = useLoad(() => client().billing.ledger({ type: type || undefined, range, page, pageSize: PAGE_SIZE }), [type, range, page, p.tick]);
  return (
    <section class="panel" aria-labelledby="ledger-h">
      <h2 id="ledger-h">Ledger</h2>
      <div class="filters">
        <label>Type <select value={type} onChange={(e) => { setType(e.currentTarget.value as typeof type); setPage(1); }}>
          <option value="">All</option>{TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
        </select></label>
        <label>Range <select value={range} onChange={(e) => { setRange(e.currentTarget.value as typeof range); setPage(1); }}>
          {RANGES.map((r) => <option key={r} value={r}>{r === 'all' ? 'All time' : `Last ${r}`}</option>)}
        </select></label>
      </div>
      <ErrorBox error={l.error} />
      {!l.data && l.loading && <Loading />}
      {l.data && (l.data.items.length === 0 ? <Empty>No ledger entries.</Empty> : (
        <table class="grid" aria-label="Ledger">
          <thead><tr><th>When</th><th>Type</th><th class="num">Amount</th><th class="num">Balance after</th><th>Note</th></tr></thead>
          <tbody>
            {l.data.items.map((e) => (
              <tr key={e.id}>
                <td>{when(e.createdAt)}</td><td>{e.type}</td>
                <td class="num">{e.amount > 0 ? '+' : ''}{e.amount.toLocaleString()}</td>
                <td class="num">{e.balanceAfter.toLocaleString()}</td>
                <td class="muted">{e.note ?? e.ref ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
      {l.data && l.data.total > PAGE_SIZE && (
        <nav class="pager" aria-label="Ledger pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {l.data.page} of {Math.ceil(l.data.total / PAGE_SIZE)}</span>
          <button type="button" disabled={!l.data.hasMore} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </section>
  );
}
