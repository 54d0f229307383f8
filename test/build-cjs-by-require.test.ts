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
// @ts-expect-error a plain ES module of the build, without types
import { shimSource } from '../scripts/cjs-by-require.mjs';

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

test('the build requires @mikro-orm/postgresql, ioredis and ws instead of importing them, and bundles typebox', () => {
  const out = mkdtempSync(join(tmpdir(), 'hub-build-'));
  try {
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsup', 'dist', 'cli-default.js'), '--silent', '--out-dir', out], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const code = readdirSync(out, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(out, f), 'utf8'))
      .join('\n');
    for (const pkg of ['@mikro-orm/postgresql', 'ioredis', 'ws']) {
      assert.doesNotMatch(code, new RegExp(`from ["']${pkg}["']`), `${pkg} is not imported`);
      assert.ok(code.includes(`createRequire(import.meta.url)(${JSON.stringify(pkg)})`), `${pkg} is required`);
    }
    assert.doesNotMatch(code, /from ["']typebox/, 'typebox is in the bundle');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
