// The controls an agent shows in the list and on its page: state badges,
// the enable switch and submit for review (PATCH with `enable` / `step`).
import type { MyAgent } from '../../src/client/index.js';
import { client } from '../session.js';
import { Badge, ErrorBox } from '../ui.js';
import { useBoundAction } from '../use-action.js';

const TONE = { online: 'ok', reviewing: 'warn', offline: 'off', draft: 'off' } as const;

export function StateBadges(p: { a: MyAgent }) {
  const a = p.a;
  return (
    <span class="badges">
      <Badge tone={TONE[a.usageStatus]}>{a.usageStatus}</Badge>
      {a.reviewStatus && <Badge tone={a.reviewStatus === 'approved' ? 'ok' : a.reviewStatus === 'rejected' ? 'bad' : 'warn'}>review {a.reviewStatus}</Badge>}
      <Badge>{a.scope}</Badge>
      {!a.enable && <Badge tone="off">disabled</Badge>}
    </span>
  );
}

export function AgentControls(p: { a: MyAgent; onChanged: (a: MyAgent) => void }) {
  const a = p.a;
  const toggle = useBoundAction(async (on: boolean) => p.onChanged(await client().agents.update(a.id, { enable: on })));
  const submit = useBoundAction(async () => p.onChanged(await client().agents.update(a.id, { step: 'submit' })));
  // A listed agent is not offered a resubmit (it would leave the market until reviewed); a substantive edit resubmits by itself.
  const canSubmit = a.usageStatus === 'draft' || (a.scope === 'public' && (a.usageStatus === 'offline' || a.reviewStatus === 'rejected'));
  return (
    <div class="row wrap controls">
      <button type="button" role="switch" aria-checked={a.enable} aria-label="Enabled" class={`switch ${a.enable ? 'on' : 'off'}`} disabled={toggle.busy} onClick={() => toggle.run(!a.enable)}>
        {toggle.busy ? 'Saving…' : a.enable ? 'Enabled' : 'Disabled'}
      </button>
      {canSubmit && (
        <button type="button" disabled={submit.busy} onClick={() => submit.run()}>
          {submit.busy ? 'Submitting…' : a.scope === 'public' ? 'Submit for review' : 'Publish'}
        </button>
      )}
      {a.usageStatus === 'reviewing' && <span class="muted">Waiting for an administrator's review.</span>}
      {a.rejectReason && <span class="error-text">Rejected: {a.rejectReason}</span>}
      <ErrorBox error={toggle.error ?? submit.error} />
    </div>
  );
}
