// What the account is bound to: phone, linked identities, the chat platform.
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, when } from '../ui.js';
import { useLoad } from '../use-load.js';

export function BindingsCard() {
  const b = useLoad(() => client().bindings.get(), []);
  const d = b.data;
  const none = d && !d.phone && d.identities.length === 0 && !d.chatapp.bound;
  return (
    <section class="panel" aria-labelledby="bindings-h">
      <h2 id="bindings-h">Bindings</h2>
      <ErrorBox error={b.error} />
      {!d && b.loading && <Loading />}
      {none && <Empty>Nothing bound to this account.</Empty>}
      {d && !none && (
        <dl class="facts">
          <dt>Phone</dt><dd>{d.phone ? `${d.phone.countryCode ?? ''} ${d.phone.number}` : '—'}</dd>
          <dt>Identities</dt><dd>{d.identities.length ? d.identities.map((i) => `${i.provider} (${i.displayName ?? 'linked'}, ${when(i.linkedAt)})`).join(', ') : '—'}</dd>
          <dt>Chat platform</dt><dd>{d.chatapp.bound ? `${d.chatapp.displayName ?? d.chatapp.chatUserId} (since ${when(d.chatapp.boundAt)})` : '—'}</dd>
        </dl>
      )}
    </section>
  );
}
