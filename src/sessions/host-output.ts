// The output bounds of runs (src/limits.ts): frames held while a run loads, what one run holds (streamed text not yet covered by a
// message, rows not yet written, the tool ids and names it keeps), what it stores in all, and what
// one host's runs on this node hold together: each run is bounded on its own, but a host chooses
// its capacity and may keep many runs open at once.
import { ChurnMap, ChurnSet } from '../churn-map.js';
import { HOST_CHECK_FROM_BYTES, frameBytes, type Limits } from '../limits.js';
import type { RunFrame } from '../hosts/gateway.js';
import type { RunState } from './run-batch.js';

/** How a run ends when its session stores more than SESSION_STORED_MAX_BYTES (stopped, or refused at dispatch). */
export const SESSION_FULL = { code: 'SESSION_FULL', message: 'the session holds the most a session may store: start a new session' };
/** Sessions remembered as full on a node (the oldest forgotten first: a run of one forgotten is stopped at its first write). */
const FULL_SESSIONS_MAX = 10_000;

export class HostOutput {
  /** The states of each host's runs (ChurnMap and ChurnSet: run states die young). */
  private byHost = new ChurnMap<string, ChurnSet<RunState>>();
  /** Sessions a write found over SESSION_STORED_MAX_BYTES: their waiting messages' runs are refused at dispatch. */
  private full = new Set<string>();

  constructor(private readonly limits: Pick<Limits, 'runOutputBytes' | 'runStoredBytes' | 'hostOutputBytes' | 'runBacklogBytes'>) {}

  /** Frames of a run being loaded wait, up to their bound; past it the rest is dropped and the run ends once loaded. */
  hold(st: RunState, f: RunFrame): void {
    if (st.overflow) return;
    st.backlogBytes += frameBytes(f);
    if (st.backlogBytes > this.limits.runBacklogBytes) {
      st.overflow = true;
      st.backlog = [];
      return;
    }
    st.backlog.push(f);
  }

  /**
   * Whether the run's session, as the run's last write left it, stores more than `max` (0: no bound);
   * such a session is remembered, so the runs of its waiting messages are refused rather than started.
   */
  sessionOver(st: RunState, max: number): boolean {
    if (!max || st.sessionStored === undefined || st.sessionStored <= max) return false;
    if (this.full.size >= FULL_SESSIONS_MAX) this.full.delete(this.full.values().next().value!);
    this.full.add(st.sessionId);
    return true;
  }

  isFull(sessionId: string): boolean {
    return this.full.has(sessionId);
  }

  /**
   * Whether `n` more bytes held, `stored` of them to be stored, take the run over its bounds or its
   * host's runs over the host's (then the run is to end with OUTPUT_TOO_LARGE).
   */
  runOver(st: RunState, n: number, stored: number): boolean {
    const held = st.partial.bytes + st.pendingBytes + st.toolBytes + n;
    return held > this.limits.runOutputBytes || st.storedBytes + stored > this.limits.runStoredBytes || this.over(st, n, held);
  }

  /** Counts `st` on its host until `untrack`; answers `st`. */
  track(st: RunState): RunState {
    let set = this.byHost.get(st.hostId);
    if (!set) this.byHost.set(st.hostId, (set = new ChurnSet()));
    set.add(st);
    return st;
  }

  untrack(st: RunState): void {
    const set = this.byHost.get(st.hostId);
    if (set?.delete(st) && set.size === 0) this.byHost.delete(st.hostId);
  }

  /**
   * Whether `n` more bytes (the run then holding `held`) take the host's runs over the host's bound.
   * Asked for a run holding more than HOST_CHECK_FROM_BYTES, once per that many bytes it takes (not
   * per delta: the sum walks the host's runs), from each run's own counts, so nothing drifts; a
   * host's runs hold at most the bound plus that much for each of its runs.
   */
  over(st: RunState, n: number, held: number): boolean {
    st.sinceHostCheck += n;
    if (held <= HOST_CHECK_FROM_BYTES || st.sinceHostCheck < HOST_CHECK_FROM_BYTES) return false;
    st.sinceHostCheck = 0;
    return this.held(st.hostId) + n > this.limits.hostOutputBytes;
  }

  /** What the host's runs on this node hold together. */
  private held(hostId: string): number {
    let sum = 0;
    for (const r of this.byHost.get(hostId) ?? []) sum += r.partial.bytes + r.pendingBytes + r.toolBytes;
    return sum;
  }
}
