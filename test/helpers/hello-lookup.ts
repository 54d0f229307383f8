// Holds a hub's look-up of the open runs of hosts that said hello (src/hosts/channel-runs.ts), so that
// the hellos meanwhile are looked up together in the next batch, as in a reconnect burst.
import type { TestHub } from './hub.js';
import type { RunResolver } from '../../src/hosts/channel-runs.js';

/** Holds the next look-up until the returned function is called (safe to call twice); the later ones go through. */
export function holdHelloLookUp(t: TestHub): () => void {
  const runs = (t.hub.runFrames.gateway as unknown as { runs: { resolver: RunResolver } }).runs;
  const resolve = runs.resolver;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let first = true;
  runs.resolver = async (hellos) => {
    if (first) {
      first = false;
      await gate;
    }
    return resolve(hellos);
  };
  return () => {
    open();
    runs.resolver = resolve;
  };
}
