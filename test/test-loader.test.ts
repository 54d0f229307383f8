// npm test's loader (test/helpers/loader.mjs): typebox and jose come from one
// pre-bundled copy each, whose subpaths share module state, and a subpath the
// bundle lacks is refused instead of loaded as a second copy; the CommonJS
// packages the build requires are required, MikroORM and prom-client from one
// vendored file, as the build loads them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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
  for (const k of ['typebox', 'compile', 'jose']) assert.match(out[k], /node_modules\/\.cache\/agent-hub-test\/[0-9a-f]{16}\/esm\/[a-z-]+\.mjs$/, `${k} from the bundle`);
  assert.match(out.jose, /\/jose\.mjs$/);
  assert.deepEqual([out.ok, out.bad, out.value, out.jwtVerify], [true, false, true, 'function']);
});

test('MikroORM, its core and prom-client are required from one vendored file, ioredis and ws from node_modules, none lexed as ES imports', () => {
  const r = run(`
    import Module from 'node:module';
    import { MikroORM, EntitySchema } from '@mikro-orm/postgresql';
    import { TransactionContext, Utils } from '@mikro-orm/core';
    import { Migration } from '@mikro-orm/migrations';
    import { Registry } from 'prom-client';
    import Redis from 'ioredis';
    import WebSocket, { WebSocketServer } from 'ws';
    const files = Object.keys(Module._cache);
    console.log(JSON.stringify({
      postgresql: import.meta.resolve('@mikro-orm/postgresql'), core: import.meta.resolve('@mikro-orm/core'),
      kinds: [typeof MikroORM, typeof EntitySchema, typeof TransactionContext.getEntityManager, typeof Migration, typeof Registry, typeof Redis, typeof WebSocket, typeof WebSocketServer],
      version: Utils.getORMVersion(),
      fromNodeModules: files.filter((f) => /node_modules[\\/](@mikro-orm|knex|lodash|prom-client|@opentelemetry)[\\/]/.test(f)),
      vendor: files.filter((f) => f.endsWith('vendor/cjs.cjs')).length,
      ws: files.some((f) => /node_modules[\\/]ws[\\/]/.test(f)),
    }));
  `);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.match(out.postgresql, /agent-hub-test\/[0-9a-f]{16}\/cjs\/-mikro-orm-postgresql\.mjs$/);
  assert.match(out.core, /\/cjs\/-mikro-orm-core\.mjs$/);
  assert.deepEqual(out.kinds, ['function', 'function', 'function', 'function', 'function', 'function', 'function', 'function']);
  assert.equal(out.version, JSON.parse(readFileSync(join(root, 'node_modules/@mikro-orm/core/package.json'), 'utf8')).version, "MikroORM's own version");
  assert.deepEqual(out.fromNodeModules, [], 'nothing of MikroORM or prom-client from node_modules');
  assert.equal(out.vendor, 1, 'one vendored file, so the core the tests import is the one MikroORM uses');
  assert.equal(out.ws, true, 'ws from node_modules');
});

test('a subpath the bundle lacks is refused, not loaded as a second copy', () => {
  const r = run(`await import('typebox/build/type/index.mjs')`);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /typebox\/build\/type\/index\.mjs is not in the tests' bundle/);
  // A file of a vendored CommonJS package would be a second copy beside the vendored one.
  const cjs = run(`await import('prom-client/lib/registry.js')`);
  assert.notEqual(cjs.status, 0);
  assert.match(cjs.stderr, /prom-client\/lib\/registry\.js is not in the tests' bundle/);
});

test('TypeScript sources still load through tsx', () => {
  const out = execFileSync(process.execPath, ['--import', './test/helpers/loader.mjs', '--input-type=module', '-e', `const m = await import('./src/ids.ts'); console.log(typeof m.newId)`], { cwd: root, encoding: 'utf8' });
  assert.equal(out.trim(), 'function');
});
