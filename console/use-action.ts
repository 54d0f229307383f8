// One button's work: busy while it runs, its error kept for the ErrorBox.
import { useState } from 'preact/hooks';

export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}

/** The same, bound to one function: `run(...args)` answers whether it succeeded. */
export function useBoundAction<A extends unknown[]>(fn: (...a: A) => Promise<unknown>) {
  const action = useAction();
  const run = async (...a: A): Promise<boolean> => (await action.run(async () => {
    await fn(...a);
    return true;
  })) === true;
  return { ...action, run };
}
