// Live views by polling: `useTick` gives a counter to put in useLoad's deps, `useEvery`
// bumps it every `ms` while the tab is visible (docs/decisions.md: 2 s polling, not a stream).
import { useEffect, useState } from 'preact/hooks';

export function useTick(): [number, () => void] {
  const [n, setN] = useState(0);
  return [n, () => setN((x) => x + 1)];
}

/** Calls `fn` every `ms` while the page is visible and `on` is true. */
export function useEvery(ms: number, fn: () => void, on = true): void {
  useEffect(() => {
    if (!on) return;
    const id = setInterval(() => {
      if (document.visibilityState === 'visible') fn();
    }, ms);
    return () => clearInterval(id);
  }, [ms, on]);
}
