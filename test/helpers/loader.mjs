// `npm test`'s loader: tsx for the TypeScript sources, and the packages the
// build bundles loaded as the build loads them: typebox and jose each as one
// pre-bundled copy instead of file by file, and the CommonJS packages the build
// requires (scripts/cjs-by-require.mjs) required, MikroORM and prom-client from
// one vendored CommonJS file.
//
// Why: on Node 20 every ES module a test process imports makes a round trip
// to the loader-hooks thread, and typebox alone is 683 modules (jose 46) of
// the 929 that importing the hub loads; and importing a CommonJS package
// from ESM lexes it and everything it re-exports for names (MikroORM's index
// re-exports hundreds of files), ≈ 0.3 s more CPU than requiring it from the
// vendored file (bench/RESULTS.md, "Fortieth session", "Forty-first session").
//
// The bundles are made once per installed version (esbuild; typebox and jose
// with code splitting, so every exported subpath of a package shares one copy
// of its module state) in node_modules/.cache, which `npm ci` clears. An
// import of a subpath a bundle lacks is refused rather than loaded as a second
// copy.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BY_REQUIRE, VENDORED, VENDOR_FILE, buildVendor, shimSource } from '../../scripts/cjs-by-require.mjs';

// tsx's ES module hooks only: the sources are ES modules, and its CommonJS hook would
// also sit in front of every require() of node_modules' CommonJS packages.
const { register: registerTsx } = await import('tsx/esm/api');
registerTsx();

const root = fileURLToPath(new URL('../..', import.meta.url));
const ESM_BUNDLED = ['typebox', 'jose'];
// Tests also import @mikro-orm/core (TransactionContext): the copy the vendored MikroORM uses.
const TEST_VENDORED = [...VENDORED, '@mikro-orm/core'];
const REQUIRED = [...new Set([...BY_REQUIRE, ...TEST_VENDORED])];

const manifestOf = (pkg) => JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8'));

/** A package's exported subpaths without wildcards, as specifiers ('typebox', 'typebox/compile', …). */
function entriesOf(pkg) {
  const manifest = manifestOf(pkg);
  const e = manifest.exports ?? manifest.module ?? manifest.main;
  // A string or a conditions object is the package's root alone.
  const exports = typeof e === 'object' && Object.keys(e).some((k) => k.startsWith('.')) ? e : { '.': e };
  const specs = Object.keys(exports).filter((k) => !k.includes('*') && !k.endsWith('.json'));
  return specs.map((k) => (k === '.' ? pkg : `${pkg}/${k.slice(2)}`));
}

// One folder per installed tree (package-lock.json: the vendored file holds knex, lodash, node-postgres
// too) and per version of the rules that make it.
const key = createHash('sha256')
  .update(JSON.stringify([...ESM_BUNDLED, ...REQUIRED].map((p) => [p, manifestOf(p).version])))
  .update(readFileSync(join(root, 'package-lock.json')))
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update(readFileSync(join(root, 'scripts', 'cjs-by-require.mjs')))
  .digest('hex')
  .slice(0, 16);
const dir = join(root, 'node_modules', '.cache', 'agent-hub-test', key);
const fileOf = (spec) => spec.replace(/[^A-Za-z0-9]+/g, '-');
const esmSpecs = ESM_BUNDLED.flatMap(entriesOf);

if (!existsSync(join(dir, 'done'))) {
  const { buildSync } = await import('esbuild');
  const tmp = `${dir}.${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const require = createRequire(join(root, 'package.json'));
  buildSync({
    entryPoints: Object.fromEntries(esmSpecs.map((s) => [fileOf(s), require.resolve(s)])),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: join(tmp, 'esm'),
    outExtension: { '.js': '.mjs' },
    logLevel: 'silent',
  });
  await buildVendor(TEST_VENDORED, join(tmp, VENDOR_FILE));
  // Each required package as the build's shim: an ES module requiring it (from the vendored file or
  // node_modules) and naming what it exports, read from the copy the shim loads — in a child process
  // (without NODE_OPTIONS, which could name this loader), so this one never holds a second copy.
  const probe = `const v = require(${JSON.stringify(join(tmp, VENDOR_FILE))}); const vendored = ${JSON.stringify(TEST_VENDORED)};
    console.log(JSON.stringify(Object.fromEntries(${JSON.stringify(REQUIRED)}.map((p) => [p, Object.keys(vendored.includes(p) ? v(p) : require(p))]))));`;
  const names = JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }));
  mkdirSync(join(tmp, 'cjs'), { recursive: true });
  for (const pkg of REQUIRED) {
    writeFileSync(join(tmp, 'cjs', `${fileOf(pkg)}.mjs`), shimSource(pkg, names[pkg], TEST_VENDORED.includes(pkg) ? `../${VENDOR_FILE}` : undefined));
  }
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
  // What earlier trees or rules made is stale now: removed once an hour old, so a test run still using
  // one (the loader edited during it) keeps it.
  for (const old of readdirSync(join(dir, '..'))) {
    const path = join(dir, '..', old);
    try {
      if (old !== key && statSync(path).mtimeMs < Date.now() - 3_600_000) rmSync(path, { recursive: true, force: true });
    } catch {
      // gone already: another process cleared it
    }
  }
}

const map = Object.fromEntries([
  ...esmSpecs.map((s) => [s, pathToFileURL(join(dir, 'esm', `${fileOf(s)}.mjs`)).href]),
  ...REQUIRED.map((p) => [p, pathToFileURL(join(dir, 'cjs', `${fileOf(p)}.mjs`)).href]),
]);
register(new URL('./loader-hooks.mjs', import.meta.url), { data: { map, packages: [...ESM_BUNDLED, ...REQUIRED] } });
