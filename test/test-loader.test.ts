// npm test's loader (test/helpers/loader.mjs): typebox and jose come from one
// pre-bundled copy each, whose subpaths share module state, and a subpath the
// bundle lacks is refused instead of loaded as a second copy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (code: string) => spawnSync(process.execPath, ['--import', './test/helpers/loader.mjs', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });

test('typebox and jose resolve to the bundle; a schema built by one subpath is compiled by another', () => {
  const r = run(`
    import { Type } from 'typebox';
    import { Compile } from 'typebox/compile';
    import { Value } from 'typebox/value';
    import * as jose from 'jose';
    const C = Compile(Type.Object({ n: Type.Integer({ minimum: 1 }) }));
    console.log(JSON.stringify({
      typebox: import.meta.resolve('typebox'), compile: import.meta.resolve('typebox/compile'), jose: import.meta.resolve('jose'),
      ok: C.Check({ n: 2 }), bad: C.Check({ n: 0 }), value: Value.Check(Type.String(), 'x'), jwtVerify: typeof jose.jwtVerify,
    }));
  `);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  for (const k of ['typebox', 'compile', 'jose']) assert.match(out[k], /node_modules\/\.cache\/agent-hub-test\/typebox-[^/]*\/[a-z-]+\.mjs$/, `${k} from the bundle`);
  assert.match(out.jose, /\/jose\.mjs$/);
  assert.deepEqual([out.ok, out.bad, out.value, out.jwtVerify], [true, false, true, 'function']);
});

test('a subpath the bundle lacks is refused, not loaded as a second copy', () => {
  const r = run(`await import('typebox/build/type/index.mjs')`);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /typebox\/build\/type\/index\.mjs is not in the tests' bundle/);
});

test('TypeScript sources still load through tsx', () => {
  const out = execFileSync(process.execPath, ['--import', './test/helpers/loader.mjs', '--input-type=module', '-e', `const m = await import('./src/ids.ts'); console.log(typeof m.newId)`], { cwd: root, encoding: 'utf8' });
  assert.equal(out.trim(), 'function');
});
