// The built hub loads its large CommonJS dependencies with require(), not
// import: Node lexes an imported CommonJS module and everything it re-exports
// for names, which cost a restart ≈ 0.3 s of CPU (scripts/cjs-by-require.mjs,
// bench/RESULTS.md). The shim must behave as Node's own import of the package
// would: module.exports as the default export, its names as named exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
// @ts-expect-error a plain ES module of the build, without types
import { shimSource, VENDOR_FILE } from '../scripts/cjs-by-require.mjs';

const ROOT = resolve(import.meta.dirname, '..');

test('a shim exports what Node would: the default, the plain names (reserved words too), not the unquotable ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cjs-shim-'));
  try {
    const cjs = join(dir, 'fixture.cjs');
    writeFileSync(cjs, "exports.a = 1; exports.class = 'c'; exports['not-plain'] = 2; exports.default = 3; exports.fn = () => 'f';\n");
    const shim = join(dir, 'shim.mjs');
    writeFileSync(shim, shimSource(cjs, ['a', 'class', 'not-plain', 'default', 'fn']));
    const m = await import(pathToFileURL(shim).href);
    const native = await import(pathToFileURL(cjs).href);
    assert.equal(m.default, native.default, 'module.exports is the default export, as with import');
    assert.equal(m.a, 1);
    assert.equal(m.class, 'c');
    assert.equal(m.fn(), 'f');
    assert.deepEqual(Object.keys(m).sort(), ['a', 'class', 'default', 'fn']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the build requires ioredis and ws by name, MikroORM from its one vendored file, and bundles typebox', async () => {
  // out/vendor/cjs.cjs's `../../package.json` is this decoy: MikroORM's own `require('../../package.json')`
  // (its version check) must not find it, as it does not from its folder in node_modules.
  const top = mkdtempSync(join(tmpdir(), 'hub-build-'));
  const out = join(top, 'out');
  writeFileSync(join(top, 'package.json'), JSON.stringify({ name: 'decoy', version: '0.0.0-decoy' }));
  try {
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsup', 'dist', 'cli-default.js'), '--silent', '--out-dir', out], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    const code = new Map(files.map((f) => [f, readFileSync(join(out, f), 'utf8')]));
    const all = [...code.values()].join('\n');
    for (const pkg of ['@mikro-orm/postgresql', '@mikro-orm/migrations', 'ioredis', 'ws']) assert.doesNotMatch(all, new RegExp(`from ["']${pkg}["']`), `${pkg} is not imported`);
    for (const pkg of ['ioredis', 'ws']) assert.ok(all.includes(`createRequire(import.meta.url)(${JSON.stringify(pkg)})`), `${pkg} is required`);
    const vendored = `createRequire(import.meta.url)(${JSON.stringify(`./${VENDOR_FILE}`)})(${JSON.stringify('@mikro-orm/postgresql')})`;
    const loaders = files.filter((f) => code.get(f)!.includes(vendored));
    assert.ok(loaders.length > 0, 'MikroORM is required from the vendored file');
    // The shim names the vendored file relative to itself: it must sit at the top of the output.
    assert.deepEqual(loaders.filter((f) => f.includes('/')), []);
    assert.doesNotMatch(all, /from ["']typebox/, 'typebox is in the bundle');

    // Loaded as the hub loads it: MikroORM, knex, lodash and prom-client come from the one file, none from node_modules.
    const probe = `
      import Module, { createRequire } from 'node:module';
      const m = createRequire(${JSON.stringify(join(out, 'x.js'))})('./${VENDOR_FILE}')('@mikro-orm/postgresql');
      const fromNodeModules = Object.keys(Module._cache).filter((f) => /node_modules[\\\\/](@mikro-orm|knex|lodash|pg|prom-client|@opentelemetry)[\\\\/]/.test(f));
      const prom = createRequire(${JSON.stringify(join(out, 'x.js'))})('./${VENDOR_FILE}')('prom-client');
      console.log(JSON.stringify({ names: Object.keys(m).sort(), promNames: Object.keys(prom).sort(), version: m.Utils.getORMVersion(), checked: m.ConfigurationLoader.checkPackageVersion(), fromNodeModules }));`;
    const p = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(p.status, 0, p.stderr);
    const seen = JSON.parse(p.stdout);
    const require = createRequire(import.meta.url);
    assert.deepEqual(seen.names, Object.keys(require('@mikro-orm/postgresql')).sort(), 'the same names as the package');
    assert.deepEqual(seen.promNames, Object.keys(require('prom-client')).sort());
    const { version } = require('@mikro-orm/core/package.json') as { version: string };
    assert.equal(seen.version, version, "MikroORM's own version, not the decoy's");
    assert.equal(seen.checked, version, 'the version check of the @mikro-orm packages passes');
    assert.deepEqual(seen.fromNodeModules, []);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});
