// The review queue: pending public agents, oldest first; approve, or reject with a reason.
import { useState } from 'preact/hooks';
import type { ReviewAgent } from '../../src/client/index.js';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useWithinList } from '../use-page.js';
import { useRefusedRows } from '../use-refused-rows.js';
import { useTick } from '../use-poll.js';

function Pending(p: { a: ReviewAgent; onDecided: (msg: string) => void; onRefused: (id: string, what: string, e: unknown) => void }) {
  const a = p.a;
  const name = a.displayName || a.name;
  const refused = (e: unknown): never => {
    p.onRefused(a.id, `“${name}” is no longer in the queue`, e);
    throw e;
  };
  const [reason, setReason] = useState('');
  const act = useAction();
  const approve = async () => {
    if (await act.run(() => client().admin.approveAgent(a.id, a.version).catch(refused))) p.onDecided(`Approved “${name}”.`);
  };
  const reject = async (e: Event) => {
    e.preventDefault();
    if (await act.run(() => client().admin.rejectAgent(a.id, reason.trim(), a.version).catch(refused))) p.onDecided(`Rejected “${name}”.`);
  };
  return (
    <li class="card" data-agent={a.id}>
      <h3>{name} <span class="muted">v{a.version}</span></h3>
      <p>{a.description || <span class="muted">No description.</span>}</p>
      <p class="meta">by {a.ownerName} · {a.category} · {a.pricing} · submitted {when(a.submittedAt)}</p>
      <div class="row">
        <button type="button" disabled={act.busy} onClick={approve}>Approve</button>
      </div>
      <form class="filters" onSubmit={reject}>
        <label>Reason <input required maxLength={1000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} /></label>
        <button type="submit" class="danger" disabled={act.busy || !reason.trim()}>Reject</button>
      </form>
      <ErrorBox error={act.error} />
    </li>
  );
}

export function ReviewQueue() {
  const [tick, reload] = useTick();
  const [page, setPage] = useState(1);
  const [done, setDone] = useState('');
  const q = useLoad(() => client().admin.pendingAgents({ page, pageSize: 10 }), [page, tick]);
  useWithinList(page, setPage, q.data);
  // The card stays when the agent is still pending (its owner changed it: the newer version shows, with the refusal).
  const gone = useRefusedRows(q, (a, id) => a.id === id, reload);
  const decided = (msg: string) => {
    gone.clear();
    setDone(msg);
    reload();
  };
  const refused = (id: string, what: string, e: unknown) => {
    setDone('');
    gone.refused(id, what, e);
  };
  return (
    <section aria-labelledby="review-h">
      <h2 id="review-h">Review queue{q.data ? ` (${q.data.total})` : ''}</h2>
      {(gone.notice || done) && <p role="status">{gone.notice || done}</p>}
      <ErrorBox error={q.error} />
      {!q.data && q.loading && <Loading />}
      {q.data && (q.data.total === 0 ? <Empty>No agents waiting for review.</Empty>
        : <ul class="cards">{q.data.items.map((a) => <Pending key={a.id} a={a} onDecided={decided} onRefused={refused} />)}</ul>)}
      {q.data && q.data.total > 10 && (
        <nav class="pager" aria-label="Review pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {q.data.page}</span>
          <button type="button" disabled={!q.data.hasMore} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </section>
  );
}
