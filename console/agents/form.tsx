// Create or edit an agent: the spec's limits beside each field, host and
// engine pickers from available-hosts, the work-directory browser, and
// "Suggest" (ai-fill) to draft the name, description, tags and category.
import { useState } from 'preact/hooks';
import type { AgentWriteBody, MyAgent } from '../../src/client/index.js';
import { client } from '../session.js';
import { A, ErrorBox } from '../ui.js';
import { useBoundAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { DirBrowser } from './dirs.js';
import { Field, Labeled } from './field.js';
import { LIMITS, splitTags, tagsProblem, workDirProblem } from './limits.js';

type Step = 'draft' | 'submit' | undefined;
const MODES = ['plan', 'default', 'accept-edits', 'auto'] as const;
/** What the ceiling gives the people who use this agent on the owner's machine (the runs of others are headless: nobody answers a prompt). */
const MODE_NOTES: Record<(typeof MODES)[number], string> = {
  plan: 'others may read and plan; nothing is changed',
  default: "others may read files; edits and commands are refused unless the directory's .claude settings allow them",
  'accept-edits': 'others may also edit files without asking; commands as in default',
  auto: 'others run any command on your machine as you, without asking: only for people you trust',
};

function initial(a?: MyAgent) {
  return {
    name: a?.name ?? '',
    displayName: a?.displayName ?? '',
    desc: a?.description ?? '',
    tags: a?.tags.join(', ') ?? '',
    cat: a?.category ?? '',
    scope: a?.scope ?? ('private' as const),
    pay: a?.pricing ?? ('free' as const),
    hostId: a?.hostId ?? '',
    engine: a?.engine ?? '',
    workDir: a?.workDir ?? '',
    expectedInput: a?.expectedInput ?? '',
    expectedOutput: a?.expectedOutput ?? '',
    maxGuestMode: a?.maxGuestMode ?? ('default' as const),
  };
}
type Form = ReturnType<typeof initial>;

export function AgentForm(p: { agent?: MyAgent; onSaved: (a: MyAgent) => void }) {
  const [f, setF] = useState<Form>(() => initial(p.agent));
  const set = <K extends keyof Form>(k: K) => (v: Form[K]) => setF((s) => ({ ...s, [k]: v }));
  const [hostsTick, setHostsTick] = useState(0);
  const hosts = useLoad(() => client().agents.availableHosts(), [hostsTick]);
  const [browsing, setBrowsing] = useState(false);
  const [idea, setIdea] = useState('');
  const [suggested, setSuggested] = useState<string>();

  const host = hosts.data?.find((h) => h.id === f.hostId);
  const tags = splitTags(f.tags);
  const problems = { tags: tagsProblem(tags), workDir: workDirProblem(f.workDir) };

  const suggest = useBoundAction(async () => {
    const d = await client().agents.aiFill({ text: idea.trim() });
    setF((s) => ({ ...s, name: d.name, displayName: d.displayName, desc: d.desc, tags: d.tags.join(', '), cat: d.cat }));
    setSuggested(d.source === 'model' ? 'Suggested by your model configuration: check it before saving.' : `Suggested from keywords (no model answered${d.reason ? `: ${d.reason}` : ''}): check it before saving.`);
  });

  const save = useBoundAction(async (step: Step) => {
    const body: AgentWriteBody = {
      name: f.name.trim(), displayName: f.displayName.trim() || f.name.trim(), desc: f.desc, tags, cat: f.cat.trim(),
      scope: f.scope, pay: f.scope === 'private' ? 'free' : f.pay, workDir: f.workDir.trim(),
      expectedInput: f.expectedInput, expectedOutput: f.expectedOutput, maxGuestMode: f.maxGuestMode,
      ...(step ? { step } : {}),
    };
    // hostId and engine go together, and only when changed: an offline host's binding is kept as it is.
    if (!p.agent || f.hostId !== (p.agent.hostId ?? '') || f.engine !== (p.agent.engine ?? '')) Object.assign(body, { hostId: f.hostId, engine: f.engine });
    const a = p.agent ? await client().agents.update(p.agent.id, body) : await client().agents.create(body);
    p.onSaved(a);
  });
  const onSubmit = (step: Step) => (e: Event) => {
    e.preventDefault();
    void save.run(step);
  };
  const invalid = !f.name.trim() || !!problems.tags || !!problems.workDir;

  return (
    <form class="stack" onSubmit={onSubmit(undefined)} aria-label={p.agent ? 'Edit agent' : 'New agent'}>
      <fieldset class="panel">
        <legend>Suggest from a description</legend>
        <Field label="What should the agent do?" value={idea} onInput={setIdea} limit={{ min: 0, max: LIMITS.aiFillText.max }} rows={2} hint="fills name, description, tags and category" />
        <div class="row">
          <button type="button" disabled={suggest.busy || !idea.trim()} onClick={() => suggest.run()}>{suggest.busy ? 'Suggesting…' : 'Suggest'}</button>
          {suggested && !suggest.busy && <span class="muted" role="status">{suggested}</span>}
        </div>
        <ErrorBox error={suggest.error} />
      </fieldset>

      <Field label="Display name" value={f.displayName} onInput={set('displayName')} limit={{ min: 0, max: LIMITS.displayName.max }} hint="defaults to the name" />
      <Field label="Name" value={f.name} onInput={set('name')} limit={LIMITS.name} />
      <Field label="Description" value={f.desc} onInput={set('desc')} limit={LIMITS.desc} rows={4} />
      <Labeled label="Tags" note={<span class={problems.tags ? 'bad' : ''}>{tags.length}/{LIMITS.tags.maxItems} tags · each {LIMITS.tags.min}–{LIMITS.tags.max} characters{problems.tags && <> · <strong>{problems.tags}</strong></>}</span>}>
        {(id) => <input id={id} value={f.tags} placeholder="comma, separated" aria-invalid={!!problems.tags || undefined} onInput={(e) => set('tags')(e.currentTarget.value)} />}
      </Labeled>
      <Field label="Category" value={f.cat} onInput={set('cat')} limit={LIMITS.cat} hint="empty means “other”" />

      <div class="row wrap">
        <Labeled label="Scope">
          {(id) => (
            <select id={id} value={f.scope} onChange={(e) => set('scope')(e.currentTarget.value as Form['scope'])}>
              <option value="private">Private (no review)</option>
              <option value="public">Public (reviewed before listing)</option>
            </select>
          )}
        </Labeled>
        <Labeled label="Pricing" note={f.scope === 'private' ? 'private agents are always free' : undefined}>
          {(id) => (
            <select id={id} value={f.scope === 'private' ? 'free' : f.pay} disabled={f.scope === 'private'} onChange={(e) => set('pay')(e.currentTarget.value as Form['pay'])}>
              <option value="free">Free</option>
              <option value="paid">Paid</option>
            </select>
          )}
        </Labeled>
        <Labeled label="Others may use modes up to" note={<span class={f.maxGuestMode === 'auto' ? 'bad' : ''} data-testid="guest-mode-note">{MODE_NOTES[f.maxGuestMode]}</span>}>
          {(id) => (
            <select id={id} value={f.maxGuestMode} onChange={(e) => set('maxGuestMode')(e.currentTarget.value as Form['maxGuestMode'])}>
              {MODES.map((m) => <option value={m} key={m}>{m}</option>)}
            </select>
          )}
        </Labeled>
      </div>

      <div class="row wrap">
        <Labeled label="Host">
          {(id) => (
            <select id={id} value={f.hostId} onChange={(e) => {
              const hid = e.currentTarget.value;
              setF((s) => ({ ...s, hostId: hid, engine: hosts.data?.find((h) => h.id === hid)?.engines[0]?.id ?? '' }));
            }}>
              <option value="">— none —</option>
              {hosts.data?.map((h) => <option value={h.id} key={h.id}>{h.name} ({h.status})</option>)}
              {f.hostId && hosts.data && !host && <option value={f.hostId}>{p.agent?.hostName || f.hostId} (offline)</option>}
            </select>
          )}
        </Labeled>
        <Labeled label="Engine">
          {(id) => (
            <select id={id} value={f.engine} disabled={!f.hostId} onChange={(e) => set('engine')(e.currentTarget.value)}>
              {!f.hostId && <option value="">— pick a host —</option>}
              {host?.engines.map((en) => <option value={en.id} key={en.id}>{en.displayName}</option>)}
              {f.engine && !host?.engines.some((en) => en.id === f.engine) && <option value={f.engine}>{f.engine}</option>}
            </select>
          )}
        </Labeled>
        <button type="button" class="plain" disabled={hosts.loading} onClick={() => setHostsTick(hostsTick + 1)}>{hosts.loading ? 'Loading hosts…' : 'Reload hosts'}</button>
      </div>
      {hosts.data && hosts.data.length === 0 && <p class="empty">No host is online: pair one on the <A href="/hosts">Hosts</A> page, or save without a host for now.</p>}
      {f.hostId && host && host.engines.length === 0 && <p class="empty">This host reports no engine.</p>}
      <ErrorBox error={hosts.error} />

      <div class="stack">
        <Field label="Work directory" value={f.workDir} onInput={set('workDir')} limit={LIMITS.workDir} hint="relative to the host's work root; empty = the root" problem={problems.workDir} />
        <div class="row">
          <button type="button" disabled={!host} title={host ? undefined : 'Pick an online host first'} onClick={() => setBrowsing(!browsing)}>{browsing ? 'Hide browser' : 'Browse…'}</button>
        </div>
        {browsing && host && (
          <DirBrowser hostId={host.id} start={workDirProblem(f.workDir) ? '' : f.workDir.trim()} onClose={() => setBrowsing(false)} onPick={(path) => { set('workDir')(path); setBrowsing(false); }} />
        )}
      </div>

      <Field label="Expected input" value={f.expectedInput} onInput={set('expectedInput')} limit={LIMITS.expectedInput} rows={2} />
      <Field label="Expected output" value={f.expectedOutput} onInput={set('expectedOutput')} limit={LIMITS.expectedOutput} rows={2} />

      <div class="row wrap">
        <button type="submit" disabled={save.busy || invalid}>{save.busy ? 'Saving…' : p.agent ? 'Save' : 'Create'}</button>
        {f.scope === 'public' && <button type="button" disabled={save.busy || invalid} onClick={onSubmit('submit')}>{p.agent ? 'Save and submit for review' : 'Create and submit for review'}</button>}
        <button type="button" class="plain" disabled={save.busy || invalid} onClick={onSubmit('draft')}>Save as draft</button>
      </div>
      <ErrorBox error={save.error} />
    </form>
  );
}
