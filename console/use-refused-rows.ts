// A row of a list the hub refused to act on. A refusal mostly means someone moved first (another
// administrator decided it, its owner deleted it), so the list is read again; when the row went with
// it, the refusal is said above the list in the hub's words, since the row's own error went too.
import { useState } from 'preact/hooks';

export function useRefusedRows<T>(
  list: { data?: { items: T[] }; loading: boolean },
  /** Whether `item` is still the row `id` open to the action (not merely still listed). */
  stillOpen: (item: T, id: string) => boolean,
  reload: () => void,
) {
  const [last, setLast] = useState<{ id: string; text: string }>();
  const settled = last && list.data && !list.loading;
  const notice = settled && !list.data!.items.some((x) => stillOpen(x, last.id)) ? last.text : '';
  return {
    notice,
    refused: (id: string, what: string, e: unknown) => {
      setLast({ id, text: `${what}: ${e instanceof Error ? e.message : String(e)}.` });
      reload();
    },
    clear: () => setLast(undefined),
  };
}
