// The session list (grouped as the API's `group`) and a simple session view with its messages.
import { useState } from 'preact/hooks';
import type { SessionView } from '../src/client/index.js';
import { client } from './session.js';
import { A, Empty, ErrorBox, Loading } from './ui.js';
import { useLoad } from './use-load.js';

const PAGE_SIZE = 20;

export function Sessions() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => client().sessions.list({ page, pageSize: PAGE_SIZE }), [page]);
  const groups = new Map<string, SessionView[]>();
  for (const s of list.data?.items ?? []) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  return (
    <section>
      <h1>Sessions</h1>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && list.data.items.length === 0 && <Empty>No sessions yet: start one from an agent's page in the <A href="/">market</A>.</Empty>}
      {[...groups].map(([group, items]) => (
        <section key={group}>
          <h2>{group}</h2>
          <ul class="rows">
            {items.map((s) => (
              <li key={s.id}>
                <A href={`/sessions/${encodeURIComponent(s.id)}`}>{s.title}</A>
                <span class="muted"> · {s.agentName} · {s.messageCount} messages{s.processing ? ' · running' : ''}</span>
                {s.lastMessage && <div class="muted clip">{s.lastMessage}</div>}
              </li>
            ))}
          </ul>
        </section>
      ))}
      {list.data && list.data.total > PAGE_SIZE && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {list.data.page}</span>
          <button type="button" disabled={!list.data.hasMore} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </section>
  );
}

export function SessionPage(p: { id: string }) {
  const [tick, setTick] = useState(0);
  const s = useLoad(() => client().sessions.get(p.id, { includeMessages: true, messageLimit: 50 }), [p.id, tick]);
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>();
  const send = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await client().sessions.send(p.id, { content: text });
      setText('');
      setTick(tick + 1);
    } catch (err) {
      setError(err);
    }
  };
  if (s.error) return <ErrorBox error={s.error} />;
  if (!s.data) return <Loading />;
  const msgs = s.data.messages ?? [];
  return (
    <section>
      <p><A href="/sessions">← Sessions</A></p>
      <h1>{s.data.title}</h1>
      <p class="muted">{s.data.agentName} · {s.data.status}</p>
      {msgs.length === 0 ? <Empty>No messages yet.</Empty> : (
        <ol class="messages" aria-live="polite">
          {msgs.map((m) => (
            <li key={m.id} class={`msg ${m.role}`}>
              <div class="who">{m.role}{m.kind !== 'text' ? ` · ${m.kind}` : ''}{m.toolName ? ` · ${m.toolName}` : ''}</div>
              <div class="body">{m.content ?? (m.toolInput !== undefined ? JSON.stringify(m.toolInput) : '')}</div>
            </li>
          ))}
        </ol>
      )}
      <form class="stack" onSubmit={send}>
        <label>Message <textarea rows={3} required maxLength={100000} value={text} onInput={(e) => setText(e.currentTarget.value)} /></label>
        <div class="row">
          <button type="submit" disabled={!text.trim()}>Send</button>
          <button type="button" onClick={() => setTick(tick + 1)}>Refresh</button>
        </div>
      </form>
      <ErrorBox error={error} />
    </section>
  );
}
