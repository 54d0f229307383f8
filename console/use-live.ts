// Data kept fresh by polling while the tab is visible (no SSE stream exists
// for hosts or agents): `every` ms, at once when the tab comes back, and on
// reload(). A failed poll keeps the last data and shows the error.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export const LIVE_MS = 2000;

export function useLive<T>(fn: () => Promise<T>, deps: unknown[], every = LIVE_MS): { data?: T; error?: unknown; loading: boolean; reload: () => Promise<void> } {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const data = await fnRef.current();
      if (mine === seq.current) setState({ data, loading: false });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error, loading: false }));
    }
  }, []);
  useEffect(() => {
    setState((s) => ({ data: s.data, loading: true }));
    void reload();
    const tick = () => {
      if (document.visibilityState === 'visible') void reload();
    };
    const timer = every > 0 ? setInterval(tick, every) : undefined;
    document.addEventListener('visibilitychange', tick);
    return () => {
      seq.current++; // answers of this generation are dropped
      clearInterval(timer);
      document.removeEventListener('visibilitychange', tick);
    };
  }, deps);
  return { ...state, reload };
}
