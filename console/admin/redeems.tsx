// Redemptions: the summary; deliver cards (one "number:password" per line) or reject with a reason; a delivered one's cards revealed.
import { useState } from 'preact/hooks';
import type { AdminRedemption } from '../../src/client/index.js';
import { RevealCards } from '../reveal-cards.js';
import { client } from '../session.js';
import { counted, Empty, ErrorBox, Loading, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useRefusedRows } from '../use-refused-rows.js';
import { useTick } from '../use-poll.js';

type Status = '' | 'pending' | 'delivered' | 'rejected';

/** "no:pwd" per line → cards; a line without ':' is a number only. */
function parseCards(text: string) {
  return text.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
    const i = l.indexOf(':');
    return i < 0 ? { no: l } : { no: l.slice(0, i).trim() || undefined, pwd: l.slice(i + 1).trim() || undefined };
  });
}

function Fulfil(p: { r: AdminRedemption; onDone: () => void; onRefused: (id: string, what: string, e: unknown) => void }) {
  const [cards, setCards] = useState('');
  const [reason, setReason] = useState('');
  const act = useAction();
  const refused = (e: unknown): never => {
    p.onRefused(p.r.id, `${p.r.productName} × ${p.r.qty} is no longer pending`, e);
    throw e;
  };
  const deliver = async (e: Event) => {
    e.preventDefault();
    if (await act.run(() => client().admin.deliverRedeem(p.r.id, parseCards(cards)).catch(refused))) p.onDone();
  };
  const reject = async () => {
    if (await act.run(() => client().admin.rejectRedeem(p.r.id, reason.trim()).catch(refused))) p.onDone();
  };
  return (
    <form class="stack" onSubmit={deliver}>
      <label>Cards (one “number:password” per line) <textarea rows={2} required value={cards} onInput={(e) => setCards(e.currentTarget.value)} /></label>
      <div class="row">
        <button type="submit" disabled={act.busy || !cards.trim()}>Deliver</button>
        <input aria-label="Reject reason" placeholder="reason" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        <button type="button" class="danger" disabled={act.busy || !reason.trim()} onClick={reject}>Reject</button>
      </div>
      <ErrorBox error={act.error} />
    </form>
  );
}

function Summary(p: { tick: number }) {
  const s = useLoad(() => client().admin.redeemsSummary(), [p.tick]);
  if (s.error) return <ErrorBox error={s.error} />;
  if (!s.data) return <Loading />;
  const d = s.data;
  return (
    <dl class="facts stats" aria-label="Redemptions summary" data-redeems-pending={d.pending}>
      <dt>Pending</dt><dd>{d.pending}</dd><dt>Delivered</dt><dd>{d.delivered}</dd>
      <dt>Rejected</dt><dd>{d.rejected}</dd><dt>Total</dt><dd>{d.total}</dd>
      <dt>Tokens spent</dt><dd>{d.tokensSpent.toLocaleString()}</dd><dt>New today</dt><dd>{d.newToday}</dd>
    </dl>
  );
}

export function RedeemQueue() {
  const [status, setStatus] = useState<Status>('pending');
  const [tick, reload] = useTick();
  const list = useLoad(() => client().admin.redeems({ status: status || undefined, pageSize: 20 }), [status, tick]);
  // Another administrator delivered or rejected it meanwhile: under "All" the row stays, as they left it.
  const gone = useRefusedRows(list, (r, id) => r.id === id && r.status === 'pending', reload);
  const done = () => {
    gone.clear();
    reload();
  };
  return (
    <section aria-labelledby="aredeems-h">
      <h2 id="aredeems-h">Redemptions</h2>
      <Summary tick={tick} />
      <label>Status <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status)}>
        <option value="">All</option><option value="pending">pending</option><option value="delivered">delivered</option><option value="rejected">rejected</option>
      </select></label>
      {gone.notice && <p role="status">{gone.notice}</p>}
      <ErrorBox error={list.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && (list.data.items.length === 0 ? <Empty>No redemptions{status ? ` ${status}` : ''}.</Empty> : (
        <table class="grid" aria-label="Redemptions to fulfil">
          <thead><tr><th>When</th><th>User</th><th>Product</th><th>Status</th><th>Fulfil</th></tr></thead>
          <tbody>
            {list.data.items.map((r) => (
              <tr key={r.id} data-redeem={r.id}>
                <td>{when(r.createdAt)}</td><td>{r.userName ?? '—'}<div class="muted">{r.userId}</div></td><td>{r.productName} × {r.qty}</td>
                <td><span class={`state ${r.status}`}>{r.status}</span>{r.rejectReason && <div class="muted">{r.rejectReason}</div>}</td>
                <td>
                  {r.status === 'pending' && <Fulfil r={r} onDone={done} onRefused={gone.refused} />}
                  {r.status === 'delivered' && (
                    <>
                      <p class="muted">{counted(r.cardCount, 'card')}, delivered {when(r.deliveredAt)}</p>
                      <RevealCards label={r.productName} reveal={(v) => client().admin.redemptionCards(r.id, v)} />
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </section>
  );
}
