// The work-directory browser: lists a host's directories under its work root
// (GET /hosts/{id}/directories), one level at a time; "Use" picks the path.
import { useState } from 'preact/hooks';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading } from '../ui.js';
import { useLoad } from '../use-load.js';

const parent = (p: string) => p.split('/').slice(0, -1).join('/');

export function DirBrowser(p: { hostId: string; start: string; onPick: (path: string) => void; onClose: () => void }) {
  const [path, setPath] = useState(p.start);
  const list = useLoad(() => client().hosts.directories(p.hostId, path), [p.hostId, path]);
  return (
    <section class="panel" aria-label="Work directory browser">
      <div class="row spread">
        <strong>Work root{path ? ` / ${path}` : ''}</strong>
        <span class="row">
          <button type="button" onClick={() => p.onPick(path)}>Use this directory</button>
          <button type="button" class="plain" onClick={p.onClose}>Close</button>
        </span>
      </div>
      {path && <button type="button" class="plain" onClick={() => setPath(parent(path))}>↑ Up</button>}
      <ErrorBox error={list.error} />
      {list.loading && <Loading />}
      {!list.loading && list.data && (list.data.entries.length === 0
        ? <Empty>No directories here.</Empty>
        : (
          <ul class="dirs">
            {list.data.entries.map((d) => (
              <li key={d.path}>
                <button type="button" class="plain" aria-label={`Open ${d.name}`} onClick={() => setPath(d.path)}>{d.name}/</button>
                <button type="button" class="plain" aria-label={`Use ${d.name}`} onClick={() => p.onPick(d.path)}>Use</button>
              </li>
            ))}
          </ul>
        ))}
      {list.data?.truncated && <p class="muted">Only the first directories are shown.</p>}
    </section>
  );
}
