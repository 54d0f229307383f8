// `npm run build`: the hub (dist/main.js) and the agent-host CLI
// (dist/host-cli/main.js, the package's `bin`), the embedded database's
// template maker (dist/pglite-template.js, see src/db/template.ts), ESM for Node 20. Dependencies
// stay external (uWS is a native binding) except three pure-ESM ones, bundled: Node loads an ES
// module file by file, and typebox alone is 700 of them (typebox, jose and @msgpack/msgpack
// bundled took ≈ 0.3 s of CPU off a restart, bench/RESULTS.md), and MikroORM, required from one
// CommonJS bundle of its own (dist/vendor/cjs.cjs, scripts/cjs-by-require.mjs). Worker files
// that other modules load by path are emitted as entries of their own beside them.
import { existsSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { BY_REQUIRE, VENDORED, cjsByRequire } from './scripts/cjs-by-require.mjs';

const entry: Record<string, string> = {
  main: 'src/main.ts',
  'host-cli/main': 'src/host-cli/main.ts',
  'pglite-template': 'src/db/template-build.ts',
};
if (existsSync('src/model-configs/vault-worker.mjs')) entry['model-configs/vault-worker'] = 'src/model-configs/vault-worker.mjs';

export default defineConfig({
  entry,
  outDir: 'dist',
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  splitting: true,
  sourcemap: true,
  clean: true,
  dts: false,
  shims: false,
  // tsup's own plugin, which runs first, marks dependencies external; the packages loaded by require are
  // left to scripts/cjs-by-require.mjs.
  noExternal: ['typebox', 'jose', '@msgpack/msgpack', ...BY_REQUIRE],
  esbuildPlugins: [cjsByRequire(BY_REQUIRE, VENDORED)],
});
