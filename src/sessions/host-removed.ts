// A deleted host's waiting messages can never run (their tasks name the host): they end failed with
// HOST_DELETED and their readers are told, so their sessions stop reading `queued` and take new
// messages again (on the agent's next host). Left waiting, a session with ten of them refused every
// new message (queue full) for good. Its running runs end as any run of a host that went away.
import type { HubContext } from '../context.js';
import { pooled } from '../db/pooled.js';
import type { SessionEvents } from './events.js';

const MESSAGE = "the agent's host was deleted before this message could run";

export async function failWaitingOf(ctx: HubContext, events: SessionEvents, hostIds: string[]): Promise<void> {
  if (!hostIds.length) return;
  const ended = await pooled<{ id: string; session_id: string }>(ctx.orm,
    `update session_tasks set status = 'failed', ended_at = now(), error_code = 'HOST_DELETED', error_message = ?
      where host_id = any(?::text[]) and status = 'queued' returning id, session_id`, [MESSAGE, hostIds]);
  for (const r of ended) events.emit(r.session_id, r.id, 'run.error', { status: 'error', code: 'HOST_DELETED', message: MESSAGE }, { last: true });
}
