// DATA_DIR holds the master secret, the administrator key and (embedded
// default) every row of the database: it is the owner's alone. Directories
// are 0700 — also ones an older version or another tool left open — and the
// process creates its files without group or world bits whatever the umask
// it was started with (PGlite writes its files with the process's umask).
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Creates (or tightens) a private directory: 0700. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Files the process creates from now on get no group/world permissions. */
export function restrictUmask(): void {
  process.umask(process.umask() | 0o077);
}

/** Takes group/world bits off everything under `dir` (files written before the umask held). Symlinks are left alone. */
export function tightenTree(dir: string): void {
  chmodTree(dir, (mode) => mode & 0o700);
}

/** Gives everything under `dir` the mode `modeOf` makes of its current one (a file's or a directory's); symlinks are left alone. */
export function chmodTree(dir: string, modeOf: (mode: number, isDirectory: boolean) => number): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) continue;
    const mode = modeOf(st.mode & 0o7777, st.isDirectory());
    if (mode !== (st.mode & 0o7777)) chmodSync(p, mode);
    if (st.isDirectory()) chmodTree(p, modeOf);
  }
}
