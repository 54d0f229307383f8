// Form fields: the label names the control alone; the limit (used / max and
// the rule) sits under it as its description.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

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
  const id = useId();
  const n = p.value.length;
  const bad = n > p.limit.max || n < p.limit.min || !!p.problem;
  const rule = p.limit.min > 0 ? `${p.limit.min}–${p.limit.max} characters` : `up to ${p.limit.max} characters`;
  const input = {
    id, value: p.value, maxLength: p.limit.max, required: p.limit.min > 0, placeholder: p.placeholder,
    'aria-invalid': bad || undefined, 'aria-describedby': `${id}-limit`,
    onInput: (e: Event) => p.onInput((e.currentTarget as HTMLInputElement).value),
  };
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      {p.rows ? <textarea rows={p.rows} {...input} /> : <input {...input} />}
      <small id={`${id}-limit`} class={bad ? 'limit bad' : 'limit'}>
        {n}/{p.limit.max} · {rule}{p.hint && <> · {p.hint}</>}{p.problem && <> · <strong>{p.problem}</strong></>}
      </small>
    </div>
  );
}

/** A labelled control (select, checkbox row…) with an optional note under it. */
export function Labeled(p: { label: string; note?: ComponentChildren; children: (id: string) => ComponentChildren }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      {p.children(id)}
      {p.note && <small class="limit">{p.note}</small>}
    </div>
  );
}
