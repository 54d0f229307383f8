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

export function Empty(p: { children: ComponentChildren }) {
  return <p class="empty">{p.children}</p>;
}
