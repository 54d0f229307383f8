// Users: the summary, creating one, search by keyword and role (paged), and per
// user the administrator's actions (console/admin/user-actions.tsx).
import { useState } from 'preact/hooks';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, when } from '../ui.js';
import { useLoad } from '../use-load.js';
import { useWithinList } from '../use-page.js';
import { useTick } from '../use-poll.js';
import { CreateUser, UserActions } from './user-actions.js';

const PAGE_SIZE = 20;

function Summary(p: { tick: number }) {
  const s = useLoad(() => client().admin.usersSummary(), [p.tick]);
  if (s.error) return <ErrorBox error={s.error} />;
  if (!s.data) return <Loading />;
  const d = s.data;
  return (
    <dl class="facts stats" aria-label="Users summary" data-users-total={d.total}>
      <dt>Users</dt><dd>{d.total}</dd><dt>Administrators</dt><dd>{d.admins}</dd>
      <dt>New today</dt><dd>{d.newToday}</dd><dt>New this week</dt><dd>{d.newThisWeek}</dd>
      <dt>On a plan</dt><dd>{d.subscribed}</dd>
    </dl>
  );
}

export function UserList() {
  const [kw, setKw] = useState('');
  const [keyword, setKeyword] = useState('');
  const [role, setRole] = useState<'' | 'user' | 'admin'>('');
  const [page, setPage] = useState(1);
  const [tick, reload] = useTick();
  const [open, setOpen] = useState<string>();
  const [done, setDone] = useState('');
  const list = useLoad(() => client().admin.users({ keyword: keyword || undefined, role: role || undefined, page, pageSize: PAGE_SIZE }), [keyword, role, page, tick]);
  useWithinList(page, setPage, list.data);
  const plans = useLoad(() => client().billing.plans(), []);
  const search = (e: Event) => {
    e.preventDefault();
    setPage(1);
    setKeyword(kw.trim());
  };
  const changed = (msg: string) => {
    setDone(msg);
    reload();
  };
  return (
    <section aria-labelledby="users-h">
      <h2 id="users-h">Users{list.data ? ` (${list.data.total})` : ''}</h2>
      <Summary tick={tick} />
      <CreateUser onCreated={reload} />
      <form class="filters" role="search" onSubmit={search}>
        <label>Search <input type="search" maxLength={100} value={kw} onInput={(e) => setKw(e.currentTarget.value)} /></label>
        <label>Role <select value={role} onChange={(e) => { setRole(e.currentTarget.value as typeof role); setPage(1); }}>
          <option value="">All</option><option value="user">user</option><option value="admin">admin</option>
        </select></label>
        <button type="submit">Search</button>
      </form>
      {done && <p role="status">{done}</p>}
      <ErrorBox error={list.error ?? plans.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && (list.data.total === 0 ? <Empty>No users match.</Empty> : (
        <table class="grid" aria-label="Users">
          <thead><tr><th>Name</th><th>Role</th><th>Contact</th><th class="num">Balance</th><th>Plan</th><th>Created</th><th>Actions</th></tr></thead>
          <tbody>
            {list.data.items.flatMap((u) => [
              <tr key={u.id} data-user={u.id}>
                <td>{u.name}<div class="muted">{u.id}</div></td><td>{u.role}</td><td>{u.email ?? u.phone ?? '—'}</td>
                <td class="num">{u.balance.toLocaleString()}</td><td>{u.planId ?? 'free'}{u.planExpireAt ? ` until ${when(u.planExpireAt)}` : ''}</td><td>{when(u.createdAt)}</td>
                <td><button type="button" class="secondary" aria-expanded={open === u.id} aria-label={`Manage ${u.name}`} onClick={() => setOpen(open === u.id ? undefined : u.id)}>Manage</button></td>
              </tr>,
              open === u.id && plans.data && (
                <tr key={`${u.id}-actions`}><td colSpan={7}><UserActions u={u} plans={plans.data.items} onChanged={changed} /></td></tr>
              ),
            ])}
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
