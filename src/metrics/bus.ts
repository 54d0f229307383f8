// The bus as the hub's domains see it, counting publishes and deliveries. A
// decorator: the transports (bus/local.ts, bus/redis.ts) stay unaware of metrics.
import type { Bus, BusHandler } from '../bus/bus.js';

export function countedBus(inner: Bus, counters: { busPublished: { inc(): void }; busReceived: { inc(): void } }): Bus {
  const published = counters.busPublished;
  const received = counters.busReceived;
  return {
    kind: inner.kind,
    publish(topic: string, payload: Uint8Array): void {
      published.inc();
      inner.publish(topic, payload);
    },
    subscribe(topic: string, handler: BusHandler): () => void {
      return inner.subscribe(topic, (p) => {
        received.inc();
        handler(p);
      });
    },
    ready: () => inner.ready(),
    healthy: () => inner.healthy(),
    onReconnect: (h) => inner.onReconnect(h),
    close: () => inner.close(),
  };
}
