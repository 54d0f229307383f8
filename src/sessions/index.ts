// Wires the sessions domain into a hub: events, run tracking, the scheduler
// (through the HostGateway only), services and routes.
import type { HubContext } from '../context.js';
import type { HttpApi } from '../server/http.js';
import type { HostGateway } from '../hosts/gateway.js';
import { SessionEvents } from './events.js';
import { SessionResume } from './resume.js';
import { RunTracker } from './runs.js';
import { Scheduler } from './scheduler.js';
import { Messaging } from './messaging.js';
import { SessionService } from './service.js';
import { sessionRoutes } from './routes.js';
import { stopAgentRuns } from './agent-stop.js';
import { failWaitingOf } from './host-removed.js';
import { AccountStorage } from './account-storage.js';

export interface SessionsModule {
  service: SessionService;
  messaging: Messaging;
  scheduler: Scheduler;
  events: SessionEvents;
  /** Run state of this node (tests count its database loads and held runs). */
  runs: RunTracker;
  /** Stops every run of the agent on its hosts and waits (bounded) until the engines are gone: before the agent is deleted. */
  stopAgentRuns(agentId: string): Promise<void>;
  /** Hosts deleted: their waiting messages end failed (HOST_DELETED). */
  hostsRemoved(hostIds: string[]): Promise<void>;
  /** Re-scans waiting work (hub start). */
  start(): Promise<void>;
  close(): Promise<void>;
}

export function buildSessions(ctx: HubContext, api: HttpApi, gateway: HostGateway, opts: { stopping?: () => boolean } = {}): SessionsModule {
  const events = new SessionEvents(ctx.bus, ctx.metrics.deltaSeconds);
  const resume = new SessionResume(events, ctx.bus, ctx.config.nodeId);
  let runs!: RunTracker;
  const scheduler = new Scheduler(ctx, gateway, () => runs, opts.stopping ?? (() => false));
  runs = new RunTracker(ctx, events, (hostId, waiting, claim) => scheduler.ended(hostId, waiting, claim),
    (hostId, runId) => void gateway.send(hostId, { t: 'run.abort', runId }).catch(() => undefined), // offline: nothing left to stop
    (hostId) => gateway.heldCapacity(hostId));
  const storage = new AccountStorage(ctx);
  const messaging = new Messaging(ctx, gateway, scheduler, runs, events, storage);
  const service = new SessionService(ctx, messaging, storage);
  sessionRoutes(api, service, messaging, events, resume);
  return {
    service,
    messaging,
    scheduler,
    events,
    runs,
    stopAgentRuns: (agentId) => stopAgentRuns(ctx, gateway, events, agentId),
    hostsRemoved: (hostIds) => failWaitingOf(ctx, events, hostIds),
    start: async () => {
      scheduler.startSweep(ctx.config.hostHeartbeatTimeoutMs);
      // As often as the channels' sweep: a run.start lost on the bus is sent again within two of its periods.
      scheduler.startReconcile(Math.max(500, Math.floor(ctx.config.hostHeartbeatTimeoutMs / 3)));
      await scheduler.drainAll();
    },
    async close() {
      await scheduler.close();
      await runs.close();
      resume.close();
      storage.close();
      events.close();
    },
  };
}
