// The account page: balance, trend, ledger, plan, buying a plan or tokens, orders, store and redemptions, bindings, API keys.
import { client } from '../session.js';
import { ErrorBox } from '../ui.js';
import { useLoad } from '../use-load.js';
import { useTick } from '../use-poll.js';
import { BalanceCard, LedgerTable } from './balance.js';
import { TrendChart } from './trend.js';
import { BuyPlan, BuyTokens, OrderList, PlanCard } from './orders.js';
import { Redemptions, Store } from './store.js';
import { BindingsCard } from './bindings.js';
import { ApiKeys } from './keys.js';

/** `onSignedOut`: the console's own key was deleted here. */
export function Account(p: { onSignedOut: () => void }) {
  // One counter: an order, a payment or a redemption changes the balance, the ledger, the trend and the lists.
  const [tick, changed] = useTick();
  const me = useLoad(() => client().me(), []);
  return (
    <section>
      <h1>Account</h1>
      <ErrorBox error={me.error} />
      {me.data && <p class="muted">{me.data.name} · {me.data.role}{me.data.email ? ` · ${me.data.email}` : ''}</p>}
      <BalanceCard tick={tick} />
      <TrendChart tick={tick} />
      <LedgerTable tick={tick} />
      <PlanCard tick={tick} />
      <BuyPlan onOrdered={changed} onPaid={changed} />
      <BuyTokens onOrdered={changed} onPaid={changed} />
      <OrderList tick={tick} onSettled={changed} />
      <Store tick={tick} onRedeemed={changed} />
      <Redemptions tick={tick} />
      <BindingsCard />
      <ApiKeys onSignedOut={p.onSignedOut} />
    </section>
  );
}
