// Showing a delivered redemption's cards. The hub asks an account with a bound
// phone for a fresh phone code first (the step-up `verifyToken`): on that 403
// the viewer types the bound number, gets a code by SMS and reveals with it.
import { useState } from 'preact/hooks';
import { ApiError, type Cards } from '../src/client/index.js';
import { client } from './session.js';
import { CopyButton, Empty, ErrorBox } from './ui.js';
import { useAction } from './use-action.js';

const needsCode = (e: unknown) => e instanceof ApiError && e.status === 403;

export function RevealCards(p: { reveal: (verifyToken?: string) => Promise<Cards>; label: string }) {
  const [cards, setCards] = useState<Cards>();
  const [stepUp, setStepUp] = useState(false);
  const [phone, setPhone] = useState('');
  const [cc, setCc] = useState('+86');
  const [sent, setSent] = useState(false);
  const [code, setCode] = useState('');
  const act = useAction();
  const reveal = async (token?: string) => {
    const r = await act.run(async () => {
      try {
        return await p.reveal(token);
      } catch (e) {
        // The first try without a code tells whether one is needed: not an error to show.
        if (!token && needsCode(e)) {
          setStepUp(true);
          return undefined;
        }
        throw e;
      }
    });
    if (r) {
      setCards(r);
      setStepUp(false);
    }
  };
  const send = async (e: Event) => {
    e.preventDefault();
    if (await act.run(() => client().bindings.sendPhoneCode(phone.trim(), cc.trim() || undefined))) setSent(true);
  };
  if (cards) {
    const text = cards.cards.map((c) => [c.no, c.pwd].filter(Boolean).join(':')).join('\n');
    return (
      <div class="stack" data-cards={cards.id}>
        {cards.cards.length === 0 ? <Empty>No cards.</Empty> : (
          <table class="grid" aria-label={`Cards of ${p.label}`}>
            <thead><tr><th>Number</th><th>Password</th></tr></thead>
            <tbody>{cards.cards.map((c, i) => <tr key={i}><td><code>{c.no ?? '—'}</code></td><td><code>{c.pwd ?? '—'}</code></td></tr>)}</tbody>
          </table>
        )}
        <div class="row"><CopyButton text={text} label="Copy cards" /><button type="button" class="secondary" onClick={() => setCards(undefined)}>Hide</button></div>
      </div>
    );
  }
  return (
    <div class="stack">
      {!stepUp && <button type="button" disabled={act.busy} onClick={() => reveal()}>{act.busy ? 'Revealing…' : 'Reveal cards'}</button>}
      {stepUp && (
        <form class="stack" aria-label={`Verify to reveal ${p.label}`} onSubmit={sent ? (e) => { e.preventDefault(); void reveal(code.trim()); } : send}>
          <p class="muted">Your account has a bound phone: confirm it with a code to see the cards.</p>
          <div class="row">
            <label>Country code <input size={5} maxLength={6} value={cc} onInput={(e) => setCc(e.currentTarget.value)} /></label>
            <label>Bound phone number <input required inputMode="numeric" maxLength={20} value={phone} onInput={(e) => setPhone(e.currentTarget.value)} /></label>
          </div>
          {sent && <label>Code from the SMS <input required inputMode="numeric" maxLength={6} autoComplete="one-time-code" value={code} onInput={(e) => setCode(e.currentTarget.value)} /></label>}
          <div class="row">
            {!sent && <button type="submit" disabled={act.busy || !phone.trim()}>{act.busy ? 'Sending…' : 'Send code'}</button>}
            {sent && <button type="submit" disabled={act.busy || !code.trim()}>{act.busy ? 'Checking…' : 'Verify and reveal'}</button>}
            {sent && <button type="button" class="secondary" disabled={act.busy} onClick={() => { setSent(false); setCode(''); }}>Send another code</button>}
          </div>
        </form>
      )}
      <ErrorBox error={act.error} />
    </div>
  );
}
