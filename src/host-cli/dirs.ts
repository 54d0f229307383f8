// Directory listings confined to the work root. The requested path must be
// relative without '..', and what it resolves to (symlinks followed) must
// still lie inside the real work root; symlinked entries leading out are
// left out. An answer is bounded in entries and in bytes (`truncated` says so).
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { DirsResult } from '../../host-protocol/frames.js';
import { ReplyCodes } from '../../host-protocol/frames.js';

export class DirsError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

const MAX_ENTRIES = 5000;
/**
 * Bytes of names and paths in one answer: with the entry bound this keeps the reply
 * frame far below the channel's 4 MiB frame limit, whose breach would close the
 * channel and every run on it.
 */
const MAX_BYTES = 1024 * 1024;

function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

export function relativeSegments(path: string): string[] {
  const p = path.replace(/\\/g, '/');
  if (p.includes('\0') || p.startsWith('/') || /^[A-Za-z]:/.test(p)) throw new DirsError(ReplyCodes.INVALID, 'path must be relative to the work root');
  const segs = p.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.includes('..')) throw new DirsError(ReplyCodes.INVALID, "path must not contain '..'");
  return segs;
}

export async function listDirs(workRoot: string, path: string): Promise<DirsResult> {
  const segs = relativeSegments(path);
  const rel = segs.join('/');
  const root = await realpath(workRoot);
  let target: string;
  try {
    target = await realpath(join(root, ...segs));
  } catch {
    throw new DirsError(ReplyCodes.NOT_FOUND, `no directory ${JSON.stringify(rel)} under the work root`);
  }
  if (!inside(root, target)) throw new DirsError(ReplyCodes.INVALID, 'path leads outside the work root');
  let dirents;
  try {
    dirents = await readdir(target, { withFileTypes: true });
  } catch {
    throw new DirsError(ReplyCodes.NOT_FOUND, `${JSON.stringify(rel)} is not a readable directory`);
  }
  const entries: DirsResult['entries'] = [];
  let bytes = 0;
  let truncated = false;
  for (const d of dirents.sort((a, b) => a.name.localeCompare(b.name))) {
    let ok = d.isDirectory();
    if (d.isSymbolicLink()) {
      try {
        const real = await realpath(join(target, d.name));
        ok = inside(root, real) && (await stat(real)).isDirectory();
      } catch {
        ok = false;
      }
    }
    if (!ok) continue;
    const entry = { name: d.name, path: rel ? `${rel}/${d.name}` : d.name };
    const size = Buffer.byteLength(entry.name) + Buffer.byteLength(entry.path);
    if (entries.length >= MAX_ENTRIES || bytes + size > MAX_BYTES) {
      truncated = true;
      break;
    }
    bytes += size;
    entries.push(entry);
  }
  return truncated ? { path: rel, entries, truncated } : { path: rel, entries };
}
