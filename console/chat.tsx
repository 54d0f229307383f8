// One session as a chat: its history (text, thinking, tool calls and results),
// the running turn streamed live (src/client/sse.ts, resumed after a network
// drop), waiting messages with their position and cancel, abort, and cost.
// The latest HISTORY messages are reloaded as the turn goes; older ones are paged
// back on demand (GET /sessions/{id}/messages?before=) and kept above them.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { SessionCost, SessionMessage, SessionQueue, SessionView } from '../src/client/index.js';
import { followSession, type Follow, type FollowState, type SessionStreamEvent } from '../src/client/sse.js';
import { client, token } from './session.js';
import { A, counted, Empty, ErrorBox, Loading } from './ui.js';

const HISTORY = 50;
/** While a message waits for the host (no turn of this session runs), the page looks again this often. */
const WAIT_POLL_MS = 2000;

interface LiveTurn {
  runId?: string;
  text: string;
  tools: Array<{ toolName: string; toolId: string | null; done: boolean; isError?: boolean }>;
}

type Conn = FollowState | { state: 'idle' };

function json(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

function Message(p: { m: SessionMessage }) {
  const m = p.m;
  const result = m.toolResult as { content?: unknown; isError?: boolean } | undefined;
  const flags = m.interrupted ? <span class="tag warn">interrupted</span> : null;
  if (m.kind === 'thinking') {
    return (
      <li class="msg thinking" data-kind="thinking">
        <details><summary class="who">Thinking {flags}</summary><div class="body">{m.content}</div></details>
      </li>
    );
  }
  if (m.kind === 'tool_use') {
    return (
      <li class="msg tool" data-kind="tool_use">
        <div class="who">Tool call · <strong>{m.toolName}</strong> {flags}</div>
        <pre class="code">{json(m.toolInput)}</pre>
      </li>
    );
  }
  if (m.kind === 'tool_result') {
    return (
      <li class={`msg tool${result?.isError ? ' failed' : ''}`} data-kind="tool_result">
        <div class="who">Tool result{result?.isError ? ' · error' : ''} {flags}</div>
        <pre class="code">{json(result?.content ?? m.content ?? '')}</pre>
      </li>
    );
  }
  return (
    <li class={`msg ${m.role}`} data-kind="text">
      <div class="who">{m.role === 'user' ? 'You' : 'Agent'} {flags}</div>
      <div class="body">{m.content}</div>
    </li>
  );
}

function ConnStatus(p: { conn: Conn }) {
  const c = p.conn;
  if (c.state === 'reconnecting') return <p class="conn lost" role="status">Connection lost: reconnecting (attempt {c.attempt})…</p>;
  if (c.state === 'connecting') return <p class="conn" role="status">Connecting…</p>;
  if (c.state === 'open') return <p class="conn live" role="status">● Live</p>;
  return null;
}

export function ChatPage(p: { id: string }) {
  const id = p.id;
  const [session, setSession] = useState<SessionView>();
  const [msgs, setMsgs] = useState<SessionMessage[]>([]);
  const [older, setOlder] = useState<SessionMessage[]>([]);
  const [olderMore, setOlderMore] = useState<boolean>(); // unknown until the first page back
  const [olderBusy, setOlderBusy] = useState(false);
  const latest = useRef<SessionMessage[]>([]);
  const [queue, setQueue] = useState<SessionQueue>({ items: [], total: 0 });
  const [cost, setCost] = useState<SessionCost>();
  const [live, setLive] = useState<LiveTurn | null>(null);
  const [conn, setConn] = useState<Conn>({ state: 'idle' });
  const [loadError, setLoadError] = useState<unknown>();
  const [error, setError] = useState<unknown>();
  const [runError, setRunError] = useState<string>();
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const followRef = useRef<Follow | undefined>(undefined);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const alive = useRef(true);
  const sawText = useRef(false);
  /** The latest reload started, and the latest whose answer was applied: answers can arrive out of order. */
  const reloads = useRef({ started: 0, applied: 0 });

  const reload = async (): Promise<SessionView | undefined> => {
    const mine = ++reloads.current.started;
    try {
      const c = client();
      const [s, q, k] = await Promise.all([c.sessions.get(id, { includeMessages: true, messageLimit: HISTORY }), c.sessions.queue(id), c.sessions.cost(id)]);
      if (!alive.current) return undefined;
      // An answer older than one already shown would take the page back, and what it lacks of the
      // newer window would be taken for messages slid out of it (shown among the older ones).
      if (mine < reloads.current.applied) return s;
      reloads.current.applied = mine;
      setSession(s);
      const now = s.messages ?? [];
      const ids = new Set(now.map((m) => m.id));
      // Once older pages are shown, what slides out of the latest window joins them instead of leaving a gap.
      const slid = latest.current.filter((m) => !ids.has(m.id));
      latest.current = now;
      setOlder((o) => (o.length && slid.length ? [...o, ...slid.filter((m) => !o.some((x) => x.id === m.id))] : o));
      setMsgs(now);
      setQueue(q);
      setCost(k);
      setLoadError(undefined);
      return s;
    } catch (e) {
      if (alive.current) setLoadError(e);
      return undefined;
    }
  };

  const onEvent = (e: SessionStreamEvent) => {
    if (!alive.current) return;
    switch (e.event) {
      case 'accepted':
        setLive((l) => ({ ...(l ?? { text: '', tools: [] }), runId: e.data.runId }));
        void reload(); // the user message is persisted now
        break;
      case 'snapshot':
        if (e.data.runId) setLive((l) => ({ ...(l ?? { text: '', tools: [] }), runId: e.data.runId ?? undefined }));
        break;
      case 'message.delta':
        // The turn's first text: what came before it (thinking) is in the history now.
        if (!sawText.current) {
          sawText.current = true;
          void reload();
        }
        setLive((l) => ({ ...(l ?? { tools: [] }), text: (l?.text ?? '') + e.data.delta }));
        break;
      case 'tool.started':
        setLive((l) => ({ ...(l ?? { text: '' }), tools: [...(l?.tools ?? []), { toolName: e.data.toolName, toolId: e.data.toolId, done: false }] }));
        void reload(); // the call's input is in the history
        break;
      case 'tool.completed':
        setLive((l) => l && { ...l, tools: l.tools.map((t) => (t.toolId === e.data.toolId && !t.done ? { ...t, done: true, isError: e.data.isError } : t)) });
        void reload();
        break;
      default:
        break;
    }
  };

  /** What follows a turn: the next waiting message may have started, or waits for the host. */
  const next = (s: SessionView | undefined, pause = 0) => {
    clearTimeout(timer.current);
    if (!alive.current || !s || followRef.current) return;
    if (s.status === 'processing') timer.current = setTimeout(() => follow(), pause);
    else if (s.status === 'queued') timer.current = setTimeout(() => void reload().then((s2) => next(s2)), WAIT_POLL_MS);
  };

  const follow = (send?: { content: string }) => {
    followRef.current?.close();
    clearTimeout(timer.current);
    setRunError(undefined);
    setLive({ text: '', tools: [] });
    sawText.current = false;
    const f = followSession({ baseUrl: '', token: token(), sessionId: id, send, onEvent, onState: (s) => alive.current && setConn(s) });
    followRef.current = f;
    f.done.then(
      async (end) => {
        if (followRef.current !== f) return;
        followRef.current = undefined;
        if (!alive.current) return;
        setConn({ state: 'idle' });
        if (end.reason === 'error' && end.end?.event === 'run.error') setRunError(end.end.data.status === 'aborted' ? 'Stopped.' : `The run failed: ${end.end.data.message}`);
        if (end.reason === 'gave-up') setRunError('The connection to the hub was lost. Reload the page to see the rest of the answer.');
        const s = await reload();
        setLive(null);
        // A follow that found no turn waits a little before looking again (the session may be between turns).
        next(s, end.reason === 'no-run' ? 1000 : 0);
      },
      async (e) => {
        if (followRef.current !== f) return;
        followRef.current = undefined;
        if (!alive.current) return;
        setConn({ state: 'idle' });
        setError(e);
        setLive(null);
        if (send) setText((t) => t || send.content); // refused: the text is not lost
        next(await reload(), 1000);
      },
    );
  };

  useEffect(() => {
    alive.current = true;
    latest.current = [];
    setOlder([]);
    setOlderMore(undefined);
    void reload().then((s) => next(s));
    return () => {
      alive.current = false;
      clearTimeout(timer.current);
      followRef.current?.close();
      followRef.current = undefined;
    };
  }, [id]);

  const send = async (e: Event) => {
    e.preventDefault();
    const content = text.trim();
    if (!content) return;
    setError(undefined);
    setText('');
    if (!followRef.current && session?.status === 'active') return follow({ content });
    // A turn runs: this one waits its turn (202 queued), or starts at once if that turn just ended.
    setBusy(true);
    try {
      await client().sessions.send(id, { content });
      next(await reload());
    } catch (err) {
      setError(err);
      setText(content);
    } finally {
      setBusy(false);
    }
  };

  const loadOlder = async () => {
    const first = older[0] ?? msgs[0];
    if (!first) return;
    setOlderBusy(true);
    setError(undefined);
    try {
      const h = await client().sessions.messages(id, { before: first.id, limit: HISTORY });
      if (!alive.current) return;
      setOlder((o) => [...h.items, ...o]);
      setOlderMore(h.hasMore);
    } catch (err) {
      setError(err);
    } finally {
      setOlderBusy(false);
    }
  };

  const abort = async () => {
    setError(undefined);
    try {
      await client().sessions.abort(id);
      if (!followRef.current) await reload();
    } catch (err) {
      setError(err);
    }
  };

  const cancel = async (taskId: string) => {
    setError(undefined);
    try {
      await client().chat.cancelQueued(id, taskId);
    } catch (err) {
      setError(err);
    }
    await reload();
  };

  if (!session) return loadError ? <ErrorBox error={loadError} /> : <Loading />;
  const waiting = new Set(queue.items.map((q) => q.taskId));
  // Waiting messages show in the queue; the running turn's text shows live until it is persisted in full.
  const shown = [...older, ...msgs].filter((m) => !(m.role === 'user' && m.runId && waiting.has(m.runId)) && !(live?.runId && m.runId === live.runId && m.role === 'assistant' && m.kind === 'text'));
  const running = !!live || session.status !== 'active';
  const persistedTools = new Set(msgs.filter((m) => m.kind === 'tool_use' && m.toolId).map((m) => m.toolId));
  return (
    <section class="chat">
      <p><A href="/sessions">← Sessions</A></p>
      <h1>{session.title}</h1>
      <p class="muted">
        <A href={`/market/${encodeURIComponent(session.agentId)}`}>{session.agentName}</A> · <span data-testid="session-status">{session.status}</span>
        {session.model && <> · model {session.model}</>}
      </p>
      {cost && (
        <p class="cost" data-testid="cost">
          Cost: <strong>{cost.cost}</strong> tokens (input {cost.inputTokens}, output {cost.outputTokens}) · {counted(cost.messageCount, 'message')}
        </p>
      )}
      <ConnStatus conn={conn} />
      {(olderMore ?? msgs.length >= HISTORY) && (
        <p><button type="button" class="small" disabled={olderBusy} onClick={loadOlder}>{olderBusy ? 'Loading…' : 'Load older messages'}</button></p>
      )}
      {shown.length === 0 && !live ? <Empty>No messages yet. Say hello below.</Empty> : (
        <ol class="messages" aria-label="Conversation">
          {shown.map((m) => <Message m={m} key={m.id} />)}
          {live && (
            <>
              {live.tools.filter((t) => !t.toolId || !persistedTools.has(t.toolId)).map((t, i) => (
                <li class="msg tool" key={`t${i}`}><div class="who">Tool call · <strong>{t.toolName}</strong> · {t.done ? (t.isError ? 'failed' : 'done') : 'running…'}</div></li>
              ))}
              <li class="msg assistant streaming" data-testid="live">
                <div class="who">Agent · streaming</div>
                <div class="body" aria-live="polite">{live.text}<span class="cursor" aria-hidden="true">▍</span></div>
              </li>
            </>
          )}
        </ol>
      )}
      {runError && <p class="notice" role="status">{runError}</p>}
      {queue.items.length > 0 && (
        <section aria-labelledby="queue-h" class="queue">
          <h2 id="queue-h">Waiting messages ({queue.total})</h2>
          <ol class="rows">
            {queue.items.map((q) => (
              <li key={q.taskId} data-testid="queued">
                <span class="pos">#{q.position}</span> <span class="clip">{q.content}</span>
                <span class="muted"> · {q.queueReason === 'host_capacity' ? 'waiting for the host' : 'after the current turn'}</span>{' '}
                <button type="button" class="small" onClick={() => cancel(q.taskId)} aria-label={`Cancel waiting message ${q.position}`}>Cancel</button>
              </li>
            ))}
          </ol>
        </section>
      )}
      <form class="stack composer" onSubmit={send}>
        <label>Message <textarea rows={3} required maxLength={100000} value={text} onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e); }} /></label>
        <div class="row">
          <button type="submit" disabled={busy || !text.trim()}>{running ? 'Queue' : 'Send'}</button>
          {running && <button type="button" class="danger" onClick={abort}>Stop</button>}
        </div>
      </form>
      <ErrorBox error={error} />
    </section>
  );
}
