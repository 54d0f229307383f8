// The store (products paid with tokens) and the user's redemptions: a delivered
// one's cards revealed (with the phone step-up when the hub asks), marked read.
import type { Redemption } from '../../src/client/index.js';
import { RevealCards } from '../reveal-cards.js';
import { client } from '../session.js';
import { Badge, Empty, ErrorBox, Loading, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useTick } from '../use-poll.js';

export function Store(p: { tick: number; onRedeemed: () => void }) {
  const [own, reload] = useTick();
  const products = useLoad(() => client().billing.products(), [p.tick, own]);
  const act = useAction();
  const redeem = async (id: string, name: string) => {
    if (!confirm(`Redeem “${name}” with tokens?`)) return;
    // Stock changes with every redemption: read again after this one, or after a refusal (sold out meanwhile).
    if (await act.run(() => client().billing.redeem(id))) p.onRedeemed();
    else reload();
  };
  const d = products.data;
  return (
    <section class="panel" aria-labelledby="store-h">
      <h2 id="store-h">Store</h2>
      <ErrorBox error={products.error ?? act.error} />
      {!d && products.loading && <Loading />}
      {d && (d.items.length === 0 ? <Empty>Nothing in the store.</Empty> : (
        <ul class="cards">
          {d.items.map((x) => (
            <li class="card" key={x.id}>
              <h3>{x.name}</h3>
              <p>{x.description}</p>
              <p class="meta">{x.priceTokens.toLocaleString()} tokens{x.stock !== null ? ` · ${x.stock} left` : ''}</p>
              <button type="button" disabled={!x.available || act.busy} onClick={() => redeem(x.id, x.name)}>{x.available ? 'Redeem' : 'Sold out'}</button>
            </li>
          ))}
        </ul>
      ))}
    </section>
  );
}

function Row(p: { r: Redemption; onRead: () => void }) {
  const r = p.r;
  const act = useAction();
  const markRead = async () => {
    if (await act.run(() => client().billing.markRead(r.id))) p.onRead();
  };
  // The hub marks a redemption unread when it is delivered or rejected.
  const news = !r.read;
  return (
    <tr data-redeem={r.id}>
      <td>{when(r.createdAt)}</td><td>{r.productName} × {r.qty} {news && <Badge tone="warn">new</Badge>}</td><td class="num">{r.tokens.toLocaleString()}</td>
      <td><span class={`state ${r.status}`}>{r.status}</span>{r.rejectReason && <div class="muted">{r.rejectReason}</div>}</td>
      <td class="num">{r.cardCount}</td>
      <td>
        {r.status === 'delivered' && <RevealCards label={r.productName} reveal={(v) => client().billing.cards(r.id, v)} />}
        {news && <button type="button" class="secondary" disabled={act.busy} onClick={markRead}>Mark read</button>}
        <ErrorBox error={act.error} />
      </td>
    </tr>
  );
}

export function Redemptions(p: { tick: number }) {
  const [own, reload] = useTick();
  const list = useLoad(() => client().billing.redeems({ pageSize: 10 }), [p.tick, own]);
  return (
    <section class="panel" aria-labelledby="redeems-h">
      <h2 id="redeems-h">Redemptions</h2>
      <ErrorBox error={list.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && (list.data.items.length === 0 ? <Empty>No redemptions yet.</Empty> : (
        <table class="grid" aria-label="Redemptions">
          <thead><tr><th>When</th><th>Product</th><th class="num">Tokens</th><th>Status</th><th class="num">Cards</th><th>Actions</th></tr></thead>
          <tbody>{list.data.items.map((r) => <Row key={r.id} r={r} onRead={reload} />)}</tbody>
        </table>
      ))}
    </section>
  );
}
