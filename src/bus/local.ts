// The single-process Bus: a map of topic → handlers. Delivery is
// synchronous, so a publish reaches local readers with no extra hop.
import type { Bus, BusHandler } from './bus.js';

export class LocalBus implements Bus {
  readonly kind = 'local' as const;
  private topics = new Map<string, Set<BusHandler>>();

  publish(topic: string, payload: Uint8Array): void {
    const set = this.topics.get(topic);
    if (!set) return;
    for (const h of [...set]) {
      try {
        h(payload);
      } catch {
        // A failing subscriber must not stop delivery to the others.
      }
    }
  }

  subscribe(topic: string, handler: BusHandler): () => void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    set.add(handler);
    return () => {
      set!.delete(handler);
      if (set!.size === 0 && this.topics.get(topic) === set) this.topics.delete(topic);
    };
  }

  onReconnect(_handler: () => void): () => void {
    // Nothing to reconnect: delivery is in process and never lost.
    return () => {};
  }

  healthy(): boolean {
    return true;
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.topics.clear();
  }
}
