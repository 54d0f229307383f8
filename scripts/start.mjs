// `npm start`: the built hub (dist/main.js), with source maps so stack traces
// name src/ lines. `npm ci` builds it (the `prepare` script); when a source
// file is newer than the build (an edit, a pull), it is rebuilt here first
// (tsup, a second or two). Without tsup (a production-only install) and no
// current build, the sources run through tsx, as `npm run dev` does.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = join(root, 'dist', 'main.js');
// What the bundle is made of; console/ is not in it (the hub bundles the console itself).
const INPUTS = ['src', 'host-protocol', 'tsup.config.ts', 'scripts/cjs-by-require.mjs', 'package-lock.json'];

function newest(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs; // a deleted file shows as the folder's change
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

function current() {
  const st = statSync(built, { throwIfNoEntry: false });
  return !!st && Math.max(...INPUTS.map((p) => newest(join(root, p)))) <= st.mtimeMs;
}

function rebuild() {
  const tsup = join(root, 'node_modules', 'tsup', 'dist', 'cli-default.js');
  if (!existsSync(tsup)) return false;
  process.stderr.write('agent-hub: sources changed since the last build; building dist/ (npm run build)\n');
  return spawnSync(process.execPath, [tsup, '--silent'], { cwd: root, stdio: 'inherit' }).status === 0;
}

if (current() || rebuild()) {
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'main.ts')).href);
}
