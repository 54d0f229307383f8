// The market: featured agents, search, category, the four sorts, paging; and one agent's page.
import { useState } from 'preact/hooks';
import type { Agent, MarketParams, SessionView } from '../src/client/index.js';
import { client, token } from './session.js';
import { go } from './router.js';
import { A, counted, Empty, ErrorBox, Loading } from './ui.js';
import { useLoad } from './use-load.js';
import { useWithinList } from './use-page.js';

const SORTS: Array<{ key: NonNullable<MarketParams['sort']>; label: string }> = [
  { key: 'usage', label: 'Most used' },
  { key: 'recent', label: 'Recently updated' },
  { key: 'favs', label: 'Most favorited' },
  { key: 'sessions', label: 'Most sessions' },
];
const PAGE_SIZE = 12;

function AgentCard(p: { agent: Agent }) {
  const a = p.agent;
  return (
    <li class="card">
      <h3><A href={`/market/${encodeURIComponent(a.id)}`}>{a.displayName || a.name}</A></h3>
      <p>{a.description || <span class="muted">No description.</span>}</p>
      <p class="meta">
        {a.category && <span class="tag">{a.category}</span>}
        {a.tags.map((t) => <span class="tag" key={t}>#{t}</span>)}
        <span>{a.pricing}</span> · <span>{counted(a.usageCount, 'use')}</span> · <span>★ {a.favoriteCount}</span>
      </p>
    </li>
  );
}

export function Market() {
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const [cat, setCat] = useState('');
  const [tag, setTag] = useState('');
  const [sort, setSort] = useState<NonNullable<MarketParams['sort']>>('usage');
  const [page, setPage] = useState(1);
  const featured = useLoad(() => client().market.featured(), []);
  const facets = useLoad(() => client().market.facets(), []);
  const list = useLoad(() => client().market.list({ q: search || undefined, cat: cat || undefined, tag: tag || undefined, sort, page, pageSize: PAGE_SIZE }), [search, cat, tag, sort, page]);
  useWithinList(page, setPage, list.data);

  const onSearch = (e: Event) => {
    e.preventDefault();
    setPage(1);
    setSearch(q.trim());
  };
  return (
    <section>
      <h1>Market</h1>
      {featured.data && featured.data.length > 0 && (
        <section aria-labelledby="featured">
          <h2 id="featured">Featured</h2>
          <ul class="cards">{featured.data.map((a) => <AgentCard agent={a} key={a.id} />)}</ul>
        </section>
      )}
      <form class="filters" role="search" onSubmit={onSearch}>
        <label>Search <input type="search" value={q} maxLength={200} onInput={(e) => setQ(e.currentTarget.value)} /></label>
        <label>Category{' '}
          <select value={cat} onChange={(e) => { setCat(e.currentTarget.value); setPage(1); }}>
            <option value="">All</option>
            {facets.data?.cats.map((c) => <option value={c.key} key={c.key}>{c.label} ({c.count})</option>)}
          </select>
        </label>
        <label>Sort{' '}
          <select value={sort} onChange={(e) => { setSort(e.currentTarget.value as typeof sort); setPage(1); }}>
            {SORTS.map((s) => <option value={s.key} key={s.key}>{s.label}</option>)}
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      {facets.data && facets.data.tags.length > 0 && (
        <p class="tags" aria-label="Tags">
          {facets.data.tags.slice(0, 20).map((t) => (
            <button type="button" key={t.key} class={t.key === tag ? 'tag on' : 'tag'} aria-pressed={t.key === tag}
              onClick={() => { setTag(t.key === tag ? '' : t.key); setPage(1); }}>#{t.key} ({t.count})</button>
          ))}
        </p>
      )}
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (list.data.total === 0
        ? <Empty>No agents match.</Empty>
        : <ul class="cards" aria-label="Agents">{list.data.items.map((a) => <AgentCard agent={a} key={a.id} />)}</ul>)}
      {list.data && list.data.total > 0 && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {list.data.page} of {Math.max(1, Math.ceil(list.data.total / list.data.pageSize))}</span>
          <button type="button" disabled={!list.data.hasMore} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </section>
  );
}

export function AgentPage(p: { id: string }) {
  const agent = useLoad(() => client().market.get(p.id), [p.id]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [fav, setFav] = useState<{ favorited: boolean; count: number }>();
  const toggleFavorite = async (a: Agent) => {
    const on = !(fav?.favorited ?? a.favorited);
    setError(undefined);
    try {
      const r = await client().market.favorite(p.id, on);
      setFav({ favorited: r.favorited, count: r.favoriteCount });
    } catch (e) {
      setError(e);
    }
  };
  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const s = (await client().sessions.create({ agentId: p.id })) as SessionView;
      go(`/sessions/${encodeURIComponent(s.id)}`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  if (agent.error) return <ErrorBox error={agent.error} />;
  const a = agent.data;
  if (!a) return <Loading />;
  return (
    <article>
      <p><A href="/">← Market</A></p>
      <h1>{a.displayName || a.name}</h1>
      <p>{a.description}</p>
      <dl class="facts">
        <dt>Owner</dt><dd>{a.ownerName}</dd>
        <dt>Category</dt><dd>{a.category || '—'}</dd>
        <dt>Tags</dt><dd>{a.tags.join(', ') || '—'}</dd>
        <dt>Engine</dt><dd>{a.engine ?? '—'}</dd>
        <dt>Pricing</dt><dd>{a.pricing}</dd>
        <dt>Expected input</dt><dd>{a.expectedInput || '—'}</dd>
        <dt>Expected output</dt><dd>{a.expectedOutput || '—'}</dd>
        <dt>Uses / sessions / favorites</dt><dd>{a.usageCount} / {a.sessionCount} / {fav?.count ?? a.favoriteCount}</dd>
      </dl>
      {token()
        ? (
          <div class="row">
            <button type="button" disabled={busy} onClick={start}>{busy ? 'Starting…' : 'Start a session'}</button>
            <button type="button" aria-pressed={fav?.favorited ?? a.favorited} onClick={() => toggleFavorite(a)}>
              {(fav?.favorited ?? a.favorited) ? '★ Favorited' : '☆ Favorite'}
            </button>
          </div>
        )
        : <p><A href={`/signin?from=${encodeURIComponent(location.pathname)}`}>Sign in</A> to start a session or keep it as a favorite; you come back here afterwards.</p>}
      <ErrorBox error={error} />
    </article>
  );
}
