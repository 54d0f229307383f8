// The engine lists hosts report. One shared array per distinct list (a node holds tens of thousands
// of hosts with a handful of lists between them), and the rule for a report after the hello: a list
// equal to the channel's last one changes nothing, and a host reports at most
// ENGINE_REPORTS_PER_MINUTE lists a minute (engines change when software is installed; each report
// is a presence write and a row write).
import type { Engine } from '../../host-protocol/frames.js';
import { INTERNED_LIST_MAX_CHARS } from './presence.js';
import { WindowCounter } from '../ratelimit/window-counter.js';

/** Engine lists a host may report per minute (frames, refresh replies; an HTTP heartbeat writes presence anyway and is counted by the request limit). */
export const ENGINE_REPORTS_PER_MINUTE = 10;
/** Distinct lists shared at most; past it the shared lists are forgotten (a host can send many distinct ones). */
export const ENGINE_LISTS_MAX = 10_000;

export class EngineLists {
  private lists = new Map<string, Engine[]>();
  private readonly reports = new WindowCounter(ENGINE_REPORTS_PER_MINUTE, 60_000);

  /** The shared array equal to `engines` (itself when new, or too large to share). */
  intern(engines: Engine[]): Engine[] {
    const key = JSON.stringify(engines);
    // Bounded in bytes too: only lists of a usual size are shared (a host can send thousands of distinct large ones).
    if (key.length > INTERNED_LIST_MAX_CHARS) return engines;
    let list = this.lists.get(key);
    if (!list) {
      if (this.lists.size > ENGINE_LISTS_MAX) this.lists.clear();
      this.lists.set(key, (list = engines));
    }
    return list;
  }

  /** The list to take from a host's report, or undefined when it is dropped: equal to `last`, or past the host's budget. */
  report(hostId: string, engines: Engine[], last: Engine[] | undefined): Engine[] | undefined {
    const list = this.intern(engines);
    if (list === last) return undefined;
    return this.reports.take(hostId) ? list : undefined;
  }
}
