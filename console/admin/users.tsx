// Users: search by keyword and role, paged.
import { useState } from 'preact/hooks';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, when } from '../ui.js';
import { useLoad } from '../use-load.js';

const PAGE_SIZE = 20;

export function UserList() {
  const [kw, setKw] = useState('');
  const [keyword, setKeyword] = useState('');
  const [role, setRole] = useState<'' | 'user' | 'admin'>('');
  const [page, setPage] = useState(1);
  const list = useLoad(() => client().admin.users({ keyword: keyword || undefined, role: role || undefined, page, pageSize: PAGE_SIZE }), [keyword, role, page]);
  const search = (e: Event) => {
    e.preventDefault();
    setPage(1);
    setKeyword(kw.trim());
  };
  return (
    <section aria-labelledby="users-h">
      <h2 id="users-h">Users{list.data ? ` (${list.data.total})` : ''}</h2>
      <form class="filters" role="search" onSubmit={search}>
        <label>Search <input type="search" maxLength={100} value={kw} onInput={(e) => setKw(e.currentTarget.value)} /></label>
        <label>Role <select value={role} onChange={(e) => { setRole(e.currentTarget.value as typeof role); setPage(1); }}>
          <option value="">All</option><option value="user">user</option><option value="admin">admin</option>
        </select></label>
        <button type="submit">Search</button>
      </form>
      <ErrorBox error={list.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && (list.data.items.length === 0 ? <Empty>No users match.</Empty> : (
        <table class="grid" aria-label="Users">
          <thead><tr><th>Name</th><th>Role</th><th>Contact</th><th class="num">Balance</th><th>Plan</th><th>Created</th></tr></thead>
          <tbody>
            {list.data.items.map((u) => (
              <tr key={u.id}>
                <td>{u.name}<div class="muted">{u.id}</div></td><td>{u.role}</td><td>{u.email ?? u.phone ?? '—'}</td>
                <td class="num">{u.balance.toLocaleString()}</td><td>{u.planId ?? 'free'}{u.planExpireAt ? ` until ${when(u.planExpireAt)}` : ''}</td><td>{when(u.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
      {list.data && list.data.total > PAGE_SIZE && (
        <nav class="pager" aria-label="User pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {list.data.page}</span>
          <button type="button" disabled={!list.data.hasMore} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </section>
  );
}
