// What the account is bound to: phone, linked identities, the chat platform;
// binding a phone (code by SMS) and the chat platform (a code sent to the bot).
import { useState } from 'preact/hooks';
import { client, markFlow, markLinking } from '../session.js';
import { ErrorBox, Loading, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useTick } from '../use-poll.js';
import { ChatappBind } from './chatapp.js';

/**
 * A code to the phone bound now, for changing it (the hub's `verifyToken`): without it a stolen key
 * could move the step-up of card reveals to another phone.
 */
function CurrentPhoneCode(p: { code: string; onCode: (code: string) => void }) {
  const [phone, setPhone] = useState('');
  const [cc, setCc] = useState('+86');
  const [sent, setSent] = useState(false);
  const act = useAction();
  const send = async () => {
    if (await act.run(() => client().bindings.sendPhoneCode(phone.trim(), cc.trim() || undefined))) setSent(true);
  };
  return (
    <fieldset aria-label="Current phone">
      <legend>First confirm the phone bound now</legend>
      <label>Its country code <input size={5} maxLength={6} value={cc} disabled={sent} onInput={(e) => setCc(e.currentTarget.value)} /></label>
      <label>Current phone number <input inputMode="numeric" maxLength={20} value={phone} disabled={sent} onInput={(e) => setPhone(e.currentTarget.value)} /></label>
      {!sent && <button type="button" class="secondary" disabled={act.busy || !phone.trim()} onClick={() => void send()}>{act.busy ? 'Sending…' : 'Send code to current phone'}</button>}
      {sent && (
        <>
          <label>Code sent to your current phone <input required inputMode="numeric" maxLength={6} autoComplete="one-time-code" value={p.code} onInput={(e) => p.onCode(e.currentTarget.value)} /></label>
          {/* A code spent or expired (the hub answers 403): another one without leaving the form. */}
          <button type="button" class="secondary" disabled={act.busy} onClick={() => void send()}>Send again</button>
        </>
      )}
      <ErrorBox error={act.error} />
    </fieldset>
  );
}

/** Send code → enter code → bound; changing a bound phone also takes a code of the current one. */
function PhoneBind(p: { onBound: () => void; changing: boolean }) {
  const [phone, setPhone] = useState('');
  const [cc, setCc] = useState('+86');
  const [sentTo, setSentTo] = useState<string>();
  const [code, setCode] = useState('');
  const [current, setCurrent] = useState('');
  const act = useAction();
  const send = async (e: Event) => {
    e.preventDefault();
    const s = await act.run(() => client().bindings.sendPhoneCode(phone.trim(), cc.trim() || undefined));
    if (s) setSentTo(`${s.countryCode} ${phone.trim()}`);
  };
  const bind = async (e: Event) => {
    e.preventDefault();
    if (await act.run(() => client().bindings.bindPhone(phone.trim(), code.trim(), cc.trim() || undefined, current.trim() || undefined))) {
      setSentTo(undefined);
      setCode('');
      p.onBound();
    }
  };
  return (
    <form class="filters" aria-label="Bind a phone" onSubmit={sentTo ? bind : send}>
      {p.changing && <CurrentPhoneCode code={current} onCode={setCurrent} />}
      <label>Country code <input size={5} maxLength={6} value={cc} disabled={!!sentTo} onInput={(e) => setCc(e.currentTarget.value)} /></label>
      <label>Phone number <input required inputMode="numeric" maxLength={20} value={phone} disabled={!!sentTo} onInput={(e) => setPhone(e.currentTarget.value)} /></label>
      {!sentTo && <button type="submit" disabled={act.busy || !phone.trim()}>{act.busy ? 'Sending…' : 'Send code'}</button>}
      {sentTo && (
        <>
          <label>Code sent to {sentTo} <input required inputMode="numeric" maxLength={6} autoComplete="one-time-code" value={code} onInput={(e) => setCode(e.currentTarget.value)} /></label>
          <button type="submit" disabled={act.busy || !code.trim() || (p.changing && !current.trim())}>{act.busy ? 'Binding…' : 'Bind phone'}</button>
          <button type="button" class="secondary" disabled={act.busy} onClick={() => { setSentTo(undefined); setCode(''); }}>Change number</button>
        </>
      )}
      <ErrorBox error={act.error} />
    </form>
  );
}

type Identity = { provider: string; displayName: string | null; linkedAt: string };

/** The login provider's identity: link it (through the provider, back at /auth/callback) or unlink it. */
function Identities(p: { identities: Identity[]; onChange: () => void }) {
  const providers = useLoad(() => client().auth.providers(), []);
  // /auth/callback returns here with ?linked=<provider> once a link went through.
  const [linked] = useState(() => new URLSearchParams(location.search).get('linked'));
  const act = useAction();
  const nameOf = (id: string) => providers.data?.items.find((pr) => pr.id === id)?.name ?? id;
  const link = async (provider: string) => {
    const start = await act.run(() => client().auth.linkIdentity(provider));
    if (!start) return;
    markLinking(provider);
    markFlow(start.state);
    location.assign(start.url);
  };
  const unlink = async (i: Identity) => {
    if (!confirm(`Unlink your ${nameOf(i.provider)} identity${i.displayName ? ` “${i.displayName}”` : ''}?`)) return;
    await act.run(() => client().auth.unlinkIdentity(i.provider));
    p.onChange(); // refused or not: one unlinked in another tab leaves its row until the bindings are read again
  };
  const unlinked = (providers.data?.items ?? []).filter((pr) => !p.identities.some((i) => i.provider === pr.id));
  return (
    <>
      {linked && p.identities.some((i) => i.provider === linked) && <p role="status">Linked {nameOf(linked)}.</p>}
      {p.identities.length ? (
        <ul>
          {p.identities.map((i) => (
            <li key={i.provider} data-identity={i.provider}>
              {nameOf(i.provider)} ({i.displayName ?? 'linked'}, {when(i.linkedAt)}){' '}
              <button type="button" class="secondary" disabled={act.busy} onClick={() => void unlink(i)}>Unlink</button>
            </li>
          ))}
        </ul>
      ) : 'No linked identity.'}{' '}
      {unlinked.map((pr) => <button type="button" key={pr.id} disabled={act.busy} onClick={() => void link(pr.id)}>Link {pr.name}</button>)}
      <ErrorBox error={providers.error ?? act.error} />
    </>
  );
}

export function BindingsCard() {
  const [tick, reload] = useTick();
  const b = useLoad(() => client().bindings.get(), [tick]);
  const [phoneForm, setPhoneForm] = useState(false);
  const d = b.data;
  return (
    <section class="panel" aria-labelledby="bindings-h">
      <h2 id="bindings-h">Bindings</h2>
      <ErrorBox error={b.error} />
      {!d && b.loading && <Loading />}
      {d && (
        <dl class="facts">
          <dt>Phone</dt>
          <dd data-phone={d.phone?.number ?? ''}>
            {d.phone ? `${d.phone.countryCode ?? ''} ${d.phone.number}` : 'No phone bound.'}{' '}
            {!phoneForm && <button type="button" class="secondary" onClick={() => setPhoneForm(true)}>{d.phone ? 'Change phone' : 'Bind a phone'}</button>}
            {phoneForm && <PhoneBind changing={!!d.phone} onBound={() => { setPhoneForm(false); reload(); }} />}
          </dd>
          <dt>Identities</dt><dd><Identities identities={d.identities} onChange={reload} /></dd>
          <dt>Chat platform</dt><dd><ChatappBind binding={d.chatapp} onChange={reload} /></dd>
        </dl>
      )}
    </section>
  );
}
