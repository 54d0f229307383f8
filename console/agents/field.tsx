// A labelled text field with its limit shown inline (used / max, and the rule).
import type { ComponentChildren } from 'preact';

export function Field(p: {
  label: string;
  value: string;
  onInput: (v: string) => void;
  limit: { min: number; max: number };
  hint?: ComponentChildren;
  problem?: string;
  rows?: number;
  placeholder?: string;
}) {
  const n = p.value.length;
  const bad = n > p.limit.max || n < p.limit.min || !!p.problem;
  const rule = p.limit.min > 0 ? `${p.limit.min}–${p.limit.max} characters` : `up to ${p.limit.max} characters`;
  const input = { value: p.value, maxLength: p.limit.max, required: p.limit.min > 0, placeholder: p.placeholder, 'aria-invalid': bad || undefined, onInput: (e: Event) => p.onInput((e.currentTarget as HTMLInputElement).value) };
  return (
    <label>
      {p.label}
      {p.rows ? <textarea rows={p.rows} {...input} /> : <input {...input} />}
      <small class={bad ? 'limit bad' : 'limit'}>
        {n}/{p.limit.max} · {rule}{p.hint && <> · {p.hint}</>}{p.problem && <> · <strong>{p.problem}</strong></>}
      </small>
    </label>
  );
}
