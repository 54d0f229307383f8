// Small shared pieces: links, the error box, the loading/empty states.
import type { ComponentChildren } from 'preact';
import { ApiError } from '../src/client/index.js';
import { useState } from 'preact/hooks';
import { link } from './router.js';

export function A(p: { href: string; children: ComponentChildren; class?: string }) {
  return <a href={p.href} class={p.class} onClick={link(p.href)}>{p.children}</a>;
}

/** Every failure shown as a readable sentence (the envelope's message and code). */
export function ErrorBox(p: { error: unknown }) {
  if (!p.error) return null;
  const e = p.error;
  const msg = e instanceof ApiError ? `${e.message} (${e.status}, code ${e.code})` : e instanceof Error ? e.message : String(e);
  return <p class="error" role="alert">{msg}</p>;
}

export function Loading() {
  return <p class="muted" aria-live="polite">Loading…</p>;
}

/** Long work in progress: a spinner and what is happening. */
export function Progress(p: { children: ComponentChildren }) {
  return <p class="progress" role="status" aria-live="polite"><span class="spinner" aria-hidden="true" />{p.children}</p>;
}

/** A date and time from an ISO string or ms since the epoch; '—' for none. */
export function when(t: string | number | null | undefined): string {
  if (t === null || t === undefined) return '—';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? '—' : d.toLocaleString();
}

export function Empty(p: { children: ComponentChildren }) {
  return <p class="empty">{p.children}</p>;
}

/** Copies `text` to the clipboard; when the browser refuses (no permission, not a secure origin) says so, and the text stays selectable. */
export function CopyButton(p: { text: string; label?: string }) {
  const [done, setDone] = useState<'copied' | 'failed' | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(p.text);
      setDone('copied');
    } catch {
      setDone('failed');
    }
  };
  return (
    <>
      <button type="button" onClick={copy}>{p.label ?? 'Copy'}</button>
      {done && <span class="muted" role="status">{done === 'copied' ? ' Copied.' : ' The browser refused: select the text and copy it.'}</span>}
    </>
  );
}

/** "1 message", "2 messages": a count with its noun (plural by an added "s"). */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A status word as a coloured badge. */
export function Badge(p: { children: ComponentChildren; tone?: 'ok' | 'warn' | 'off' | 'bad' }) {
  return <span class={`badge ${p.tone ?? ''}`}>{p.children}</span>;
}

/** "3 min ago" for a Unix-ms time, or a dash. */
export function ago(ms: number | null | undefined): string {
  if (!ms) return '—';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(ms).toLocaleString();
}
