// Before an agent's rows go (agents/manage.ts remove → the hook wired in
// hub.ts), everything it runs on hosts stops (issue 10, hole 14): its waiting
// messages are cancelled so none starts when a slot frees up, each running
// run is aborted on its host with a request the host answers only once the
// engine process is gone, and the run's end is written (which is what drops
// the host's running count) before the caller deletes anything. Bounded: a
// host that does not answer in time (offline, an older CLI) does not hold the
// deletion up for longer than the bound.
import type { HubContext } from '../context.js';
import type { HostGateway } from '../hosts/gateway.js';
import { marks, rows, type Em } from './sql.js';
import type { SessionEvents } from './events.js';

/** How long a deletion waits for engines to stop: above the host's SIGINT → SIGKILL grace (3 s). */
export const AGENT_STOP_WAIT_MS = 6000;
/** A run aborted this recently may still be within its kill grace on the host: ask again. */
const RECENT_ABORT_S = 10;
const POLL_MS = 25;

export async function stopAgentRuns(ctx: HubContext, gateway: HostGateway, events: SessionEvents, agentId: string, waitMs = AGENT_STOP_WAIT_MS): Promise<void> {
  const em = ctx.em() as unknown as Em;
  const deadline = Date.now() + waitMs;
  // Waiting messages first: a run that ends below must not let one of this agent's start.
  await rows(em,
    `update session_tasks set status = 'cancelled', ended_at = now()
      where status = 'queued' and session_id in (select id from sessions where agent_id = ?)`, [agentId]);
  const runs = await rows<{ id: string; host_id: string; session_id: string; status: string }>(em,
    `select t.id, t.host_id, t.session_id, t.status from session_tasks t
      where t.session_id in (select id from sessions where agent_id = ?)
        and (t.status = 'running' or (t.status = 'aborted' and (t.ended_at is null or t.ended_at > now() - make_interval(secs => ?))))`,
    [agentId, RECENT_ABORT_S]);
  if (!runs.length) return;
  const stopped: string[] = [];
  await Promise.all(runs.map(async (r) => {
    if (r.status === 'running') events.emit(r.session_id, r.id, 'run.error', { status: 'aborted', code: 'ABORTED', message: 'the agent was deleted' }, { last: true });
    try {
      await gateway.request(r.host_id, { t: 'run.abort', runId: r.id }, Math.max(1, deadline - Date.now()));
      stopped.push(r.id);
    } catch (e) {
      // Offline: nothing of it runs where the hub can reach; too old or silent: the bound is spent.
      ctx.log.warn('agent deletion: engine not confirmed stopped', { agentId, runId: r.id, hostId: r.host_id, err: (e as Error).message });
    }
  }));
  // The engines are gone; wait (within the bound) until their ends are written, so the running
  // count drops from the run's end (not from the deletion) and the two writes do not cross.
  while (stopped.length && Date.now() < deadline) {
    const open = await rows(em, `select 1 from session_tasks where id in (${marks(stopped.length)}) and status = 'running' limit 1`, stopped);
    if (!open.length) return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
