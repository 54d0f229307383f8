// An esbuild plugin (tsup.config.ts): the bundle loads the CommonJS packages
// named here with require() instead of import. Node imports a CommonJS module
// from ESM by first lexing its source, and every module it re-exports, for
// named exports: @mikro-orm/postgresql's index re-exports hundreds of files,
// and importing it cost ≈ 300 ms more CPU than requiring it (bench/RESULTS.md).
// Each package becomes a small ES module that requires it and re-exports its
// names, read at build time from the same node_modules the bundle runs on
// (scripts/start.mjs rebuilds when package-lock.json changes).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const requireHere = createRequire(import.meta.url);
const NS = 'cjs-by-require';
/** What `export { x as name }` accepts without quoting; the rest (and `default`) are left to the default export. */
const PLAIN_NAME = /^[A-Za-z_$][\w$]*$/;

/** The ES module source standing for CommonJS package `pkg`: its module.exports as the default export, its own names as named exports. */
export function shimSource(pkg, names) {
  const lines = [
    "import { createRequire } from 'node:module';",
    `const m = createRequire(import.meta.url)(${JSON.stringify(pkg)});`,
    'export default m;',
  ];
  names.filter((n) => n !== 'default' && PLAIN_NAME.test(n)).forEach((n, i) => lines.push(`const x${i} = m[${JSON.stringify(n)}];`, `export { x${i} as ${n} };`));
  return lines.join('\n') + '\n';
}

/** @param {string[]} packages bare specifiers, matched whole */
export function cjsByRequire(packages) {
  const wanted = new Set(packages);
  return {
    name: NS,
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => (wanted.has(args.path) ? { path: args.path, namespace: NS } : undefined));
      build.onLoad({ filter: /.*/, namespace: NS }, (args) => ({
        contents: shimSource(args.path, Object.keys(requireHere(args.path))),
        loader: 'js',
        resolveDir: root,
      }));
    },
  };
}
