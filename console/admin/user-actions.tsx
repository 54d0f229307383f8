// What an administrator does to users: create one (its API key shown once),
// grant tokens, set or clear its plan and the plan's end, delete it.
import { useState } from 'preact/hooks';
import { ApiError, type NewUser, type Plans, type User } from '../../src/client/index.js';
import { client } from '../session.js';
import { CopyButton, ErrorBox } from '../ui.js';
import { useAction } from '../use-action.js';

export function CreateUser(p: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<'user' | 'admin'>('user');
  const [fresh, setFresh] = useState<NewUser>();
  const act = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    const u = await act.run(() => client().admin.createUser({ name: name.trim(), role }));
    if (!u) return;
    setFresh(u);
    setName('');
    p.onCreated();
  };
  return (
    <div class="panel">
      <form class="filters" aria-label="Create a user" onSubmit={create}>
        <label>New user’s name <input required maxLength={80} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <label>New user’s role <select value={role} onChange={(e) => setRole(e.currentTarget.value as typeof role)}>
          <option value="user">user</option><option value="admin">admin</option>
        </select></label>
        <button type="submit" disabled={act.busy || !name.trim()}>{act.busy ? 'Creating…' : 'Create user'}</button>
      </form>
      <ErrorBox error={act.error} />
      {fresh && (
        <div role="status">
          <p>User <strong>{fresh.user.name}</strong> created. Its API key: copy it now, it is not shown again.</p>
          <p class="secret" data-new-user-key>{fresh.apiKey}</p>
          <div class="row"><CopyButton text={fresh.apiKey} label="Copy key" /><button type="button" class="secondary" onClick={() => setFresh(undefined)}>Done</button></div>
        </div>
      )}
    </div>
  );
}

/** yyyy-mm-dd of a ms time, in local time, for a date input. */
const day = (ms: number | null) => {
  if (ms === null) return '';
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

export function UserActions(p: { u: User; plans: Plans['items']; onChanged: (msg: string) => void }) {
  const u = p.u;
  const [qty, setQty] = useState(1);
  const [planId, setPlanId] = useState(u.planId ?? p.plans.find((x) => !x.free)?.id ?? '');
  const [until, setUntil] = useState(day(u.planExpireAt));
  const act = useAction();
  // A user another administrator deleted meanwhile: the list is read again, and the row and its error
  // go with it, so the list says what happened.
  const gone = (e: unknown): never => {
    if (e instanceof ApiError && e.status === 404) p.onChanged(`${u.name} is gone: another administrator deleted the account.`);
    throw e;
  };
  const grant = async (e: Event) => {
    e.preventDefault();
    const g = await act.run(() => client().admin.grantTokens(u.id, qty).catch(gone));
    if (g) p.onChanged(`Granted ${g.tokens.toLocaleString()} tokens to ${u.name}; balance ${g.balance.toLocaleString()}.`);
  };
  const setPlan = async (e: Event) => {
    e.preventDefault();
    // The plan ends at the end of the chosen day, local time; no day → no end.
    const planExpireAt = until ? new Date(`${until}T23:59:59`).getTime() : null;
    if (await act.run(() => client().admin.setPlan(u.id, { planId, planExpireAt }).catch(gone))) p.onChanged(`${u.name} is on ${planId} ${until ? `until ${until}` : 'with no end'}.`);
  };
  const clearPlan = async () => {
    if (await act.run(() => client().admin.setPlan(u.id, { planId: null, planExpireAt: null }).catch(gone))) p.onChanged(`${u.name} has no plan now.`);
  };
  const remove = async () => {
    if (confirm(`Delete the user “${u.name}”? Its keys, agents and sessions go with it.`) && (await act.run(() => client().admin.deleteUser(u.id).catch(gone)))) p.onChanged(`Deleted ${u.name}.`);
  };
  return (
    <div class="stack" aria-label={`Manage ${u.name}`} role="group">
      <form class="filters" onSubmit={grant}>
        <label>Grant quantity <input type="number" min={1} max={100} value={qty} onInput={(e) => setQty(Math.max(1, Math.min(100, Number(e.currentTarget.value) || 1)))} /></label>
        <button type="submit" disabled={act.busy}>Grant tokens</button>
      </form>
      <form class="filters" onSubmit={setPlan}>
        <label>Plan <select value={planId} onChange={(e) => setPlanId(e.currentTarget.value)}>
          {p.plans.map((x) => <option key={x.id} value={x.id}>{x.name}</option>)}
        </select></label>
        <label>Ends on <input type="date" value={until} onInput={(e) => setUntil(e.currentTarget.value)} /></label>
        <button type="submit" disabled={act.busy || !planId}>Set plan</button>
        <button type="button" class="secondary" disabled={act.busy || !u.planId} onClick={clearPlan}>Clear plan</button>
      </form>
      <div class="row"><button type="button" class="danger" disabled={act.busy} onClick={remove}>Delete user</button></div>
      <ErrorBox error={act.error} />
    </div>
  );
}
