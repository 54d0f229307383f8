// The session list, grouped as the API's `group` (今天 today, 本周 this week, 更早 earlier); one session is console/chat.tsx.
import { useState } from 'preact/hooks';
import type { SessionView } from '../src/client/index.js';
import { client } from './session.js';
import { A, counted, Empty, ErrorBox, Loading } from './ui.js';
import { useLoad } from './use-load.js';
import { useWithinList } from './use-page.js';

const PAGE_SIZE = 20;
const GROUP_LABEL: Record<string, string> = { 今天: 'Today', 本周: 'This week', 更早: 'Earlier' };

export function Sessions() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => client().sessions.list({ page, pageSize: PAGE_SIZE }), [page]);
  useWithinList(page, setPage, list.data);
  const groups = new Map<string, SessionView[]>();
  for (const s of list.data?.items ?? []) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  return (
    <section>
      <h1>Sessions</h1>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && list.data.total === 0 && <Empty>No sessions yet: start one from an agent's page in the <A href="/">market</A>.</Empty>}
      {[...groups].map(([group, items]) => (
        <section key={group}>
          <h2>{group} <span class="muted">{GROUP_LABEL[group]}</span></h2>
          <ul class="rows">
            {items.map((s) => (
              <li key={s.id}>
                <A href={`/sessions/${encodeURIComponent(s.id)}`}>{s.title}</A>
                <span class="muted"> · {s.agentName} · {counted(s.messageCount, 'message')} · <span class={`status ${s.status}`}>{s.status}</span>{s.pendingRuns > 0 ? ` · ${s.pendingRuns} waiting` : ''}</span>
                {s.lastMessage && <div class="muted clip">{s.lastMessage}</div>}
              </li>
            ))}
          </ul>
        </section>
      ))}
      {list.data && list.data.total > PAGE_SIZE && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {list.data.page}</span>
          <button type="button" disabled={!list.data.hasMore} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </section>
  );
}
