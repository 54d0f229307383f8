// Small shared pieces: links, the error box, the loading/empty states.
import type { ComponentChildren } from 'preact';
import { ApiError } from '../src/client/index.js';
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
