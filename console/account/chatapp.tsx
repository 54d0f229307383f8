// The chat-platform binding: an attempt gives a code the user sends to the hub's
// bot; the attempt is polled until the bot confirms it (bound) or it expires.
import { useEffect, useState } from 'preact/hooks';
import type { ChatappAttempt, ChatappBinding } from '../../src/client/index.js';
import { client } from '../session.js';
import { CopyButton, ErrorBox, Progress, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useEvery, useTick } from '../use-poll.js';

function Attempt(p: { a: ChatappAttempt; onBound: () => void; onCancel: () => void }) {
  const [tick, bump] = useTick();
  const s = useLoad(() => client().bindings.chatappAttemptState(p.a.id), [tick]);
  const status = s.data?.status ?? 'pending';
  useEvery(2000, bump, status === 'pending');
  useEffect(() => {
    if (status === 'bound') p.onBound();
  }, [status]);
  return (
    <div class="panel" data-attempt={p.a.id}>
      {status === 'pending' && (
        <>
          <p>Send this code to the hub's bot on the chat platform (before {when(p.a.expiresAt)}):</p>
          <p class="secret" data-chatapp-code>{p.a.code}</p>
          <div class="row"><CopyButton text={p.a.code} label="Copy code" /><button type="button" class="secondary" onClick={p.onCancel}>Cancel</button></div>
          <Progress>Waiting for the bot to confirm the code…</Progress>
        </>
      )}
      {status === 'expired' && <p class="notice">The code expired. <button type="button" class="secondary" onClick={p.onCancel}>Close</button></p>}
      <ErrorBox error={s.error} />
    </div>
  );
}

export function ChatappBind(p: { binding: ChatappBinding; onChange: () => void }) {
  const [attempt, setAttempt] = useState<ChatappAttempt>();
  const act = useAction();
  const b = p.binding;
  const start = async () => {
    const a = await act.run(() => client().bindings.chatappAttempt());
    if (a) setAttempt(a);
  };
  const unbind = async () => {
    if (confirm('Unbind the chat platform account?') && (await act.run(() => client().bindings.unbindChatapp()))) p.onChange();
  };
  return (
    <>
      {b.bound ? <span data-chatapp-bound>{b.displayName ?? b.chatUserId} (since {when(b.boundAt)}) </span> : 'Not bound. '}
      {b.bound && <button type="button" class="danger" disabled={act.busy} onClick={unbind}>Unbind</button>}
      {!b.bound && !attempt && <button type="button" class="secondary" disabled={act.busy} onClick={start}>Bind the chat platform</button>}
      {attempt && !b.bound && <Attempt key={attempt.id} a={attempt} onCancel={() => setAttempt(undefined)} onBound={() => { setAttempt(undefined); p.onChange(); }} />}
      <ErrorBox error={act.error} />
    </>
  );
}
