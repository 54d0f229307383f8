// Hosts: pairing (a pair key and the exact agent-host command, the new host
// appearing live), status, capacity and running count, remark, engines
// refresh, delete. The list is polled while the tab is visible (use-live.ts).
import { useState } from 'preact/hooks';
import type { HostView, PairKey } from '../src/client/index.js';
import { client } from './session.js';
import { ago, Badge, CopyButton, Empty, ErrorBox, Loading } from './ui.js';
import { useBoundAction } from './use-action.js';
import { useLive } from './use-live.js';

const REMARK_MAX = 200;

/**
 * The one command that pairs a machine and keeps it connected (host-cli/main.ts `run`). The key goes in
 * the environment: a command line is readable by every user of the machine while agent-host starts.
 */
export function pairCommand(origin: string, key: string): string {
  return `AGENT_HOST_PAIR_KEY=${key} agent-host run --hub ${origin}`;
}

const TONE = { online: 'ok', busy: 'warn', offline: 'off' } as const;

export function Hosts() {
  const hosts = useLive(() => client().hosts.list(), []);
  const [pairing, setPairing] = useState<PairKey & { known: Set<string> }>();
  const pair = useBoundAction(async () => {
    const k = await client().hosts.pairKey();
    setPairing({ ...k, known: new Set(hosts.data?.items.map((h) => h.id)) });
  });
  const items = hosts.data?.items ?? [];
  const fresh = pairing && hosts.data ? items.find((h) => !pairing.known.has(h.id)) : undefined;
  return (
    <section>
      <h1>Hosts</h1>
      <p class="muted">Machines paired with this account run your agents. The list refreshes every 2 seconds while this tab is visible.</p>
      <div class="row">
        <button type="button" disabled={pair.busy} onClick={() => pair.run()}>{pair.busy ? 'Creating a pair key…' : pairing ? 'New pair key' : 'Pair a host'}</button>
      </div>
      <ErrorBox error={pair.error} />
      {pairing && <PairPanel pairing={pairing} fresh={fresh} onClose={() => setPairing(undefined)} />}
      <ErrorBox error={hosts.error} />
      {hosts.loading && !hosts.data && <Loading />}
      {hosts.data && (items.length === 0
        ? <Empty>No hosts yet: choose “Pair a host” and run the command it shows on the machine.</Empty>
        : <ul class="rows" aria-label="Hosts">{items.map((h) => <HostRow host={h} key={h.id} onChanged={hosts.reload} />)}</ul>)}
    </section>
  );
}

function PairPanel(p: { pairing: PairKey; fresh?: HostView; onClose: () => void }) {
  const cmd = pairCommand(location.origin, p.pairing.pairKey);
  return (
    <section class="panel" aria-labelledby="pair-title">
      <h2 id="pair-title">Pair a host</h2>
      <p>Run this on the machine to pair (the key works once, until {new Date(p.pairing.expiresAt).toLocaleTimeString()}):</p>
      <pre class="cmd"><code data-testid="pair-command">{cmd}</code></pre>
      <div class="row"><CopyButton text={cmd} label="Copy command" /></div>
      <p class="muted">Add <code>--work-root DIR</code> to choose where agents may work (default: the current directory) and <code>--name NAME</code> to name the host. In the hub's checkout, run <code>npx agent-host …</code> in its place. Run again as is, it goes on with the pairing it made.</p>
      {p.fresh
        ? <p class="ok" role="status">Paired: <strong>{p.fresh.remark || p.fresh.name}</strong> is {p.fresh.status}. <button type="button" onClick={p.onClose}>Done</button></p>
        : <p role="status"><progress aria-label="Waiting for the host" /> Waiting for the host to connect…</p>}
    </section>
  );
}

function HostRow(p: { host: HostView; onChanged: () => Promise<void> }) {
  const h = p.host;
  const [remark, setRemark] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const save = useBoundAction(async (value: string | null) => {
    await client().hosts.setRemark(h.id, value);
    setRemark(undefined);
    await p.onChanged();
  });
  const refresh = useBoundAction(async () => {
    await client().hosts.refresh(h.id);
    await p.onChanged();
  });
  const del = useBoundAction(async () => {
    await client().hosts.remove(h.id);
    await p.onChanged();
  });
  const mc = h.modelConfig as { name?: string; status?: string } | null;
  const title = h.remark || h.name;
  return (
    <li class="host" aria-label={title} data-host-id={h.id}>
      <div class="row spread">
        <h3>{title} {h.remark && <span class="muted">({h.name})</span>}</h3>
        <Badge tone={TONE[h.status]}>{h.status}</Badge>
      </div>
      <dl class="facts">
        <dt>Running</dt><dd><span data-testid="running">{h.running}</span> of {h.capacity}</dd>
        <dt>Engines</dt><dd>{h.engines.length ? h.engines.map((e) => `${e.displayName}${e.version ? ` ${e.version}` : ''}`).join(', ') : <span class="muted">none reported</span>}</dd>
        <dt>Last seen</dt><dd>{h.status === 'offline' ? ago(h.lastSeenAt) : 'now'}</dd>
        <dt>CLI</dt><dd>{h.cliVersion ?? '—'}</dd>
        <dt>Model</dt><dd>{mc ? `${mc.name} (${mc.status})` : 'default'}</dd>
      </dl>
      {remark === undefined ? (
        <div class="row">
          <button type="button" onClick={() => setRemark(h.remark ?? '')}>{h.remark ? 'Edit remark' : 'Add remark'}</button>
          <button type="button" disabled={refresh.busy || h.status === 'offline'} title={h.status === 'offline' ? 'The host is offline' : undefined} onClick={() => refresh.run()}>
            {refresh.busy ? 'Refreshing engines…' : 'Refresh engines'}
          </button>
          {confirming ? (
            <span class="row" role="group" aria-label="Confirm delete">
              <span>Delete this host? It must be paired again to come back.</span>
              <button type="button" class="danger" disabled={del.busy} onClick={() => del.run()}>{del.busy ? 'Deleting…' : 'Delete host'}</button>
              <button type="button" class="plain" onClick={() => setConfirming(false)}>Cancel</button>
            </span>
          ) : <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete</button>}
        </div>
      ) : (
        <form class="row" onSubmit={(e) => { e.preventDefault(); void save.run(remark.trim() || null); }}>
          <label>Remark <input value={remark} maxLength={REMARK_MAX} onInput={(e) => setRemark(e.currentTarget.value)} /></label>
          <span class="muted">{remark.length}/{REMARK_MAX}</span>
          <button type="submit" disabled={save.busy}>{save.busy ? 'Saving…' : 'Save remark'}</button>
          <button type="button" class="plain" onClick={() => setRemark(undefined)}>Cancel</button>
        </form>
      )}
      <ErrorBox error={save.error ?? refresh.error ?? del.error} />
    </li>
  );
}
