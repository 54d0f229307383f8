// `npm test`'s loader: tsx for the TypeScript sources, and typebox and jose
// each loaded as one pre-bundled copy instead of file by file.
//
// Why: on Node 20 every ES module a test process imports makes a round trip
// to the loader-hooks thread, and typebox alone is 683 modules (jose 46) of
// the 929 that importing the hub loads — about half of a test process's
// import time (bench/RESULTS.md, "Fortieth session"). The build (tsup) bundles
// the same packages into dist/, so the tests now load them as the hub does.
//
// The bundle is made once per installed version (esbuild, code splitting, so
// every exported subpath of a package shares one copy of its module state) in
// node_modules/.cache, which `npm ci` clears. An import of a subpath the
// bundle lacks is refused rather than loaded as a second copy.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// tsx's ES module hooks only: the sources are ES modules, and its CommonJS hook would
// also sit in front of every require() of node_modules' CommonJS packages.
const { register: registerTsx } = await import('tsx/esm/api');
registerTsx();

const root = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = ['typebox', 'jose'];

/** A package's exported subpaths without wildcards, as specifiers ('typebox', 'typebox/compile', …). */
function entriesOf(pkg) {
  const manifest = JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8'));
  const e = manifest.exports ?? manifest.module ?? manifest.main;
  // A string or a conditions object is the package's root alone.
  const exports = typeof e === 'object' && Object.keys(e).some((k) => k.startsWith('.')) ? e : { '.': e };
  const specs = Object.keys(exports).filter((k) => !k.includes('*') && !k.endsWith('.json'));
  return { version: manifest.version, specs: specs.map((k) => (k === '.' ? pkg : `${pkg}/${k.slice(2)}`)) };
}

const packages = PACKAGES.map((pkg) => ({ pkg, ...entriesOf(pkg) }));
const dir = join(root, 'node_modules', '.cache', 'agent-hub-test', packages.map((p) => `${p.pkg}-${p.version}`).join('_'));
const fileOf = (spec) => spec.replace(/[^A-Za-z0-9]+/g, '-');
const specs = packages.flatMap((p) => p.specs);

if (!existsSync(join(dir, 'done'))) {
  const { buildSync } = await import('esbuild');
  const tmp = `${dir}.${process.pid}`;
  const require = createRequire(join(root, 'package.json'));
  buildSync({
    entryPoints: Object.fromEntries(specs.map((s) => [fileOf(s), require.resolve(s)])),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: tmp,
    outExtension: { '.js': '.mjs' },
    logLevel: 'silent',
  });
  writeFileSync(join(tmp, 'done'), ''); // complete: a directory without it is made again
  try {
    renameSync(tmp, dir);
  } catch {
    // Another process made it first, or an unfinished one is in the way: that one goes.
    if (!existsSync(join(dir, 'done'))) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}

const map = Object.fromEntries(specs.map((s) => [s, pathToFileURL(join(dir, `${fileOf(s)}.mjs`)).href]));
register(new URL('./loader-hooks.mjs', import.meta.url), { data: { map, packages: PACKAGES } });
