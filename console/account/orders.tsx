// Plan, token packs and orders. A pack or a plan bought through a payment channel opens the
// channel's pay page (on a sandbox hub, the hub's own); the order is polled until it settles.
import { useEffect, useState } from 'preact/hooks';
import type { Order, PlanOrder } from '../../src/client/index.js';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, Progress, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useEvery, useTick } from '../use-poll.js';

const CYCLES = ['month', 'quarter', 'year'] as const;
const money = (cents: number, currency: string) => `${currency} ${(cents / 100).toFixed(2)}`;
/** What an order cost: tokens when paid from the balance (its amount in money is 0 then), else money. */
const orderPrice = (o: Order) => (o.payMethod === 'token' ? `${o.tokens.toLocaleString()} tokens` : money(o.amountCents, o.currency));
const payMethodName = (m: string) => (m === 'token' ? 'token balance' : m);

export function PlanCard(p: { tick: number }) {
  const plan = useLoad(() => client().billing.myPlan(), [p.tick]);
  const d = plan.data;
  return (
    <section class="panel" aria-labelledby="plan-h">
      <h2 id="plan-h">Plan</h2>
      <ErrorBox error={plan.error} />
      {!d && plan.loading && <Loading />}
      {d && (
        <>
          <p><strong>{d.plan?.name ?? d.planId}</strong> {d.plan?.free ? <span class="tag">free</span> : d.expireAt ? <span class="muted">until {when(d.expireAt)}</span> : null}</p>
          {d.plan?.description && <p class="muted">{d.plan.description}</p>}
          {!d.active && d.subscribedPlanId && d.subscribedPlanId !== d.planId && <p class="muted">Your plan {d.subscribedPlanId} expired {when(d.subscribedExpireAt)}.</p>}
        </>
      )}
    </section>
  );
}

const paidNote = (o: Order) =>
  o.type === 'plan' ? `Paid: ${o.itemName} (${o.cycle}) is your plan now.` : `Paid: ${o.tokens.toLocaleString()} tokens added to your balance.`;

/** Watches one pending order until it is paid, cancelled or expired. */
function PendingOrder(p: { order: Order; onSettled: () => void }) {
  const [tick, bump] = useTick();
  const o = useLoad(() => client().billing.order(p.order.id), [tick]);
  const status = o.data?.status ?? p.order.status;
  useEvery(2000, bump, status === 'pending');
  useEffect(() => {
    if (status !== 'pending') p.onSettled();
  }, [status]);
  const payUrl = o.data?.payUrl ?? p.order.payUrl;
  return (
    <div class="panel" data-order={p.order.id}>
      <p>Order {p.order.id}: {p.order.itemName}{p.order.cycle ? ` (${p.order.cycle})` : ` × ${p.order.qty}`} = {orderPrice(p.order)} · <span class={`state ${status}`}>{status}</span></p>
      {status === 'pending' && (
        <>
          {payUrl && <p><a href={payUrl} target="_blank" rel="noopener">Open the payment page</a></p>}
          {p.order.codeUrl && <p class="muted">Or scan: <code>{p.order.codeUrl}</code></p>}
          <Progress>Waiting for the payment to be confirmed…</Progress>
        </>
      )}
      {status === 'paid' && <p>{paidNote(p.order)}</p>}
      <ErrorBox error={o.error} />
    </div>
  );
}

/** The tokens a plan grants every 30 days when paid through a channel (a cycle paid from the balance buys its quotas only). */
const monthlyTokens = (plan: { quotas: unknown }) => Number((plan.quotas as { monthlyTokens?: number } | null)?.monthlyTokens ?? 0);

/** The paid plans, each with a cycle and a way to pay: a channel (the same pay page as a pack) or the token balance. */
export function BuyPlan(p: { onOrdered: () => void; onPaid: () => void }) {
  // Plans are paid through the same channels as token packs, or from the balance.
  const offer = useLoad(async () => {
    const [plans, packs] = await Promise.all([client().billing.plans(), client().billing.tokenPacks()]);
    return { plans: plans.items.filter((x) => !x.free), payMethods: [...packs.payMethods, 'token'] };
  }, []);
  const [cycle, setCycle] = useState<PlanOrder['cycle']>('month');
  const [method, setMethod] = useState('');
  const [order, setOrder] = useState<Order>();
  const act = useAction();
  const d = offer.data;
  const pay = method || d?.payMethods[0] || '';
  const subscribe = async (planId: string) => {
    const o = await act.run(() => client().billing.buyPlan({ planId, cycle, payMethod: pay as PlanOrder['payMethod'] }));
    if (!o) return;
    setOrder(o);
    p.onOrdered();
  };
  return (
    <section class="panel" aria-labelledby="plans-h">
      <h2 id="plans-h">Plans</h2>
      <ErrorBox error={offer.error} />
      {!d && offer.loading && <Loading />}
      {d && (d.plans.length === 0 ? <Empty>No plans on sale.</Empty> : (
        <>
          <div class="filters">
            <label>Cycle <select value={cycle} onChange={(e) => setCycle(e.currentTarget.value as typeof cycle)}>
              {CYCLES.map((c) => <option key={c} value={c}>{c}</option>)}
            </select></label>
            <label>Pay with <select value={pay} onChange={(e) => setMethod(e.currentTarget.value)}>
              {d.payMethods.map((m) => <option key={m} value={m}>{payMethodName(m)}</option>)}
            </select></label>
          </div>
          <ul class="cards">
            {d.plans.map((x) => (
              <li class="card" key={x.id} data-plan={x.id}>
                <h3>{x.name}</h3>
                <p>{x.description}</p>
                <p class="meta">{pay === 'token' ? `${x.prices[cycle].tokens.toLocaleString()} tokens` : money(x.prices[cycle].cents, x.currency)} per {cycle}</p>
                {monthlyTokens(x) > 0 && <p class="meta">{pay === 'token' ? 'Paid from the balance: its monthly tokens are not included' : `${monthlyTokens(x).toLocaleString()} tokens a month included`}</p>}
                <button type="button" aria-label={`Subscribe to ${x.name}`} disabled={act.busy || !pay} onClick={() => subscribe(x.id)}>Subscribe</button>
              </li>
            ))}
          </ul>
        </>
      ))}
      <ErrorBox error={act.error} />
      {order && <PendingOrder key={order.id} order={order} onSettled={p.onPaid} />}
    </section>
  );
}

export function BuyTokens(p: { onOrdered: () => void; onPaid: () => void }) {
  const packs = useLoad(() => client().billing.tokenPacks(), []);
  const [packId, setPackId] = useState('');
  const [qty, setQty] = useState(1);
  const [method, setMethod] = useState('');
  const [order, setOrder] = useState<Order>();
  const act = useAction();
  const d = packs.data;
  const pack = packId || d?.items.find((x) => x.default)?.id || d?.items[0]?.id || '';
  const pay = method || d?.payMethods[0] || '';
  const buy = async (e: Event) => {
    e.preventDefault();
    const o = await act.run(() => client().billing.buyTokenPack({ packId: pack, qty, payMethod: pay as 'alipay' }));
    if (!o) return;
    setOrder(o);
    p.onOrdered();
  };
  return (
    <section class="panel" aria-labelledby="buy-h">
      <h2 id="buy-h">Buy tokens</h2>
      <ErrorBox error={packs.error} />
      {!d && packs.loading && <Loading />}
      {d && (d.items.length === 0 ? <Empty>No token packs on sale.</Empty> : (
        <form class="filters" onSubmit={buy}>
          <label>Pack <select value={pack} onChange={(e) => setPackId(e.currentTarget.value)}>
            {d.items.map((x) => <option key={x.id} value={x.id}>{x.name}: {x.tokens.toLocaleString()} tokens, {money(x.priceCents, x.currency)}</option>)}
          </select></label>
          <label>Quantity <input type="number" min={1} max={99} value={qty} onInput={(e) => setQty(Math.max(1, Math.min(99, Number(e.currentTarget.value) || 1)))} /></label>
          <label>Pay with <select value={pay} onChange={(e) => setMethod(e.currentTarget.value)}>
            {d.payMethods.map((m) => <option key={m} value={m}>{m}</option>)}
          </select></label>
          <button type="submit" disabled={act.busy || !pack || !pay}>{act.busy ? 'Ordering…' : 'Buy'}</button>
        </form>
      ))}
      <ErrorBox error={act.error} />
      {order && <PendingOrder key={order.id} order={order} onSettled={p.onPaid} />}
    </section>
  );
}

/**
 * The latest orders. One still pending keeps its payment page at hand (an order placed in another visit,
 * or after this page was reloaded, has no other way to be paid) and is polled until it settles; one
 * that settles here changes the balance and the plan as it does under Buy (`onSettled`).
 */
export function OrderList(p: { tick: number; onSettled: () => void }) {
  const [own, bump] = useTick();
  const list = useLoad(() => client().billing.orders({ pageSize: 10 }), [p.tick, own]);
  const pending = list.data?.items.filter((o) => o.status === 'pending').map((o) => o.id) ?? [];
  const [watched, setWatched] = useState<string[]>([]);
  useEvery(2000, bump, pending.length > 0);
  useEffect(() => {
    if (!list.data) return;
    const settled = watched.some((id) => !pending.includes(id));
    setWatched(pending);
    if (settled) p.onSettled();
  }, [list.data]);
  return (
    <section class="panel" aria-labelledby="orders-h">
      <h2 id="orders-h">Orders</h2>
      <ErrorBox error={list.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && (list.data.items.length === 0 ? <Empty>No orders yet.</Empty> : (
        <table class="grid" aria-label="Orders">
          <thead><tr><th>When</th><th>Item</th><th class="num">Amount</th><th>Paid with</th><th>Status</th></tr></thead>
          <tbody>
            {list.data.items.map((o) => (
              <tr key={o.id} data-order-id={o.id}>
                <td>{when(o.createdAt)}</td><td>{o.itemName} × {o.qty}{o.cycle ? ` (${o.cycle})` : ''}</td>
                <td class="num">{orderPrice(o)}</td><td>{payMethodName(o.payMethod)}</td>
                <td>
                  <span class={`state ${o.status}`}>{o.status}</span>
                  {o.payUrl && <> · <a href={o.payUrl} target="_blank" rel="noopener" aria-label={`Pay order ${o.id}`}>Pay</a></>}
                  {o.status === 'pending' && o.expiresAt && <div class="muted">until {when(o.expiresAt)}</div>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </section>
  );
}
