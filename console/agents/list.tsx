// My agents: the owner's agents with their state, host and counters, the
// enable switch and submit for review; totals from /agents/stats/summary.
import { useState } from 'preact/hooks';
import type { MyAgent } from '../../src/client/index.js';
import { client } from '../session.js';
import { A, counted, Empty, ErrorBox, Loading } from '../ui.js';
import { useLoad } from '../use-load.js';
import { useWithinList } from '../use-page.js';
import { AgentControls, StateBadges } from './controls.js';

const PAGE_SIZE = 20;
export const agentPath = (id: string) => `/agents/${encodeURIComponent(id)}`;

export function MyAgents() {
  const [page, setPage] = useState(1);
  const [tick, setTick] = useState(0);
  const list = useLoad(() => client().agents.mine({ page, pageSize: PAGE_SIZE, sort: 'recent' }), [page, tick]);
  useWithinList(page, setPage, list.data);
  return (
    <section>
      <div class="row spread">
        <h1>My agents</h1>
        <A href="/agents/new" class="button">New agent</A>
      </div>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && list.data.total === 0 && <Empty>No agents yet: create one with “New agent”.</Empty>}
      {list.data && list.data.items.length > 0 && (
        <ul class="rows" aria-label="My agents">
          {list.data.items.map((a) => <AgentRow a={a} key={a.id} onChanged={() => setTick((t) => t + 1)} />)}
        </ul>
      )}
      {list.data && list.data.total > PAGE_SIZE && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {list.data.page} of {Math.ceil(list.data.total / PAGE_SIZE)}</span>
          <button type="button" disabled={!list.data.hasMore} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </section>
  );
}

function AgentRow(p: { a: MyAgent; onChanged: () => void }) {
  const a = p.a;
  return (
    <li aria-label={a.displayName}>
      <div class="row spread">
        <h3><A href={agentPath(a.id)}>{a.displayName}</A> <span class="muted">{a.id}</span></h3>
        <StateBadges a={a} />
      </div>
      <p class="meta">
        <span>{a.hostName ? `${a.hostName}${a.hostUp ? '' : ' (offline)'}` : 'no host'}</span> · <span>{a.engine ?? 'no engine'}</span> ·{' '}
        <span>{counted(a.usageCount, 'use')}</span> · <span>{counted(a.sessionCount, 'session')}</span> · <span>{counted(a.runs, 'run')}</span> · <span>★ {a.favoriteCount}</span> · <span>v{a.version}</span>
      </p>
      <AgentControls a={a} onChanged={p.onChanged} />
    </li>
  );
}
