// Agent counters changed by run ends reach the market caches batched: one
// notice per agent per NOTIFY_MS, not one per run end.
import type { Bus } from '../bus/bus.js';
import { notifyAgentChanged } from '../agents/usage.js';

/** Agent counter changes reach the market caches at most this late. */
const NOTIFY_MS = 250;

export class AgentChangeNotices {
  private changed = new Set<string>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly bus: Bus) {}

  /** The agent's counters changed (committed): its notice goes out within NOTIFY_MS. */
  add(agentId: string): void {
    this.changed.add(agentId);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const ids = [...this.changed];
      this.changed.clear();
      notifyAgentChanged(this.bus, ...ids);
    }, NOTIFY_MS);
  }

  /** At close: the waiting notices go out now. */
  flush(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.changed.size) notifyAgentChanged(this.bus, ...this.changed);
  }
}
