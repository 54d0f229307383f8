// Runs orphaned by a node that died. When a host says hello on this node
// while its presence still names another node, that node never released the
// channel: it was killed (or has not seen the socket drop), and whatever it
// had buffered of the host's runs is gone. Those runs are not continued here
// with a hole in their history, nor re-queued (the engine may already have
// edited files): the host is told to abort them, its run.end reaches this
// node, and the readers see run.error. A clean handover (a draining node
// releases its hosts first) keeps the runs going. Queued work then runs.
import type { HostGateway } from '../hosts/gateway.js';
import type { Logger } from '../log.js';

export function abortRunsOfLostNodes(gateway: HostGateway, presence: { takenOverFrom(hostId: string): Promise<string | null> }, nodeId: string, log: Logger): void {
  gateway.onHostUp((hostId, { running }) => {
    void presence.takenOverFrom(hostId).then(async (from) => {
      if (!from || from === nodeId || running.length === 0) return;
      log.warn('host taken over from a node that did not release it; aborting its runs', { hostId, from, runs: running.length });
      for (const runId of running) await gateway.send(hostId, { t: 'run.abort', runId }).catch(() => undefined);
    });
  });
}
