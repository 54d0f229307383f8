// A button's async work: `busy` while it runs (for progress text and to
// block double clicks), `error` when it failed (shown through ErrorBox).
import { useState } from 'preact/hooks';

export function useAction<A extends unknown[]>(fn: (...a: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (...a: A): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await fn(...a);
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}
