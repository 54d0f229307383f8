// An esbuild plugin (tsup.config.ts): the bundle loads the CommonJS packages
// named here with require() instead of import. Node imports a CommonJS module
// from ESM by first lexing its source, and every module it re-exports, for
// named exports: @mikro-orm/postgresql's index re-exports hundreds of files,
// and importing it cost ≈ 300 ms more CPU than requiring it (bench/RESULTS.md).
// Each package becomes a small ES module that requires it and re-exports its
// names, read at build time from the same node_modules the bundle runs on
// (scripts/start.mjs rebuilds when package-lock.json changes). npm test's
// loader (test/helpers/loader.mjs) makes the same shims and vendored file from
// the lists below, so the tests load these packages as the hub does.
//
// The packages given as `vendored` are also bundled, with everything they
// require, into one CommonJS file beside the bundle (dist/vendor/cjs.cjs):
// requiring @mikro-orm/postgresql from node_modules reads and resolves 736
// files (MikroORM, knex, lodash, node-postgres), ≈ 100 ms of a restart.
// Each vendored package is evaluated only when first required (esbuild wraps
// every CommonJS module in a function), so @mikro-orm/migrations still costs
// nothing until a migration is pending.
import { createRequire, isBuiltin } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const requireHere = createRequire(import.meta.url);
const NS = 'cjs-by-require';
/** CommonJS dependencies whose import Node would lex file by file: the bundle requires them (the build, and npm test's loader). */
export const BY_REQUIRE = ['@mikro-orm/postgresql', '@mikro-orm/migrations', 'prom-client', 'ioredis', 'ws'];
/**
 * Of those, the ones required from one CommonJS bundle of them and their dependencies
 * (dist/vendor/cjs.cjs) instead of 736 + 88 files. Not a package that finds files beside its own
 * (`__dirname`): piscina starts its workers from one.
 */
export const VENDORED = ['@mikro-orm/postgresql', '@mikro-orm/migrations', 'prom-client'];
/** Where the vendored packages are bundled, relative to the output folder (the files that load them sit at its top). */
export const VENDOR_FILE = 'vendor/cjs.cjs';
/** What `export { x as name }` accepts without quoting; the rest (and `default`) are left to the default export. */
const PLAIN_NAME = /^[A-Za-z_$][\w$]*$/;

/**
 * The ES module source standing for CommonJS package `pkg`: its module.exports as the default export,
 * its own names as named exports. `vendor`: the vendored file to take it from (relative to the module).
 */
export function shimSource(pkg, names, vendor) {
  const lines = [
    "import { createRequire } from 'node:module';",
    vendor
      ? `const m = createRequire(import.meta.url)(${JSON.stringify(`./${vendor}`)})(${JSON.stringify(pkg)});`
      : `const m = createRequire(import.meta.url)(${JSON.stringify(pkg)});`,
    'export default m;',
  ];
  names.filter((n) => n !== 'default' && PLAIN_NAME.test(n)).forEach((n, i) => lines.push(`const x${i} = m[${JSON.stringify(n)}];`, `export { x${i} as ${n} };`));
  return lines.join('\n') + '\n';
}

/** The vendored file's entry: a function from a package's name to its module.exports, each package required on first use. */
export function vendorEntry(packages) {
  const cases = packages.map((p) => `    case ${JSON.stringify(p)}: return require(${JSON.stringify(p)});`);
  return ['module.exports = (name) => {', '  switch (name) {', ...cases, '  }', "  throw new Error('not vendored: ' + name);", '};', ''].join('\n');
}

/**
 * What a vendored package requires and cannot find from its own folder (optional drivers of other
 * databases, a path tried in a try/catch) must fail with MODULE_NOT_FOUND at every require, as it
 * would in node_modules; resolving it from the bundle's folder instead could find something else
 * (MikroORM reads its version from `../../package.json`, which from dist/vendor is the hub's own).
 * Such a require is left to run time, as a path under the bundle file itself (`./cjs.cjs/…`): a
 * path under a file never exists. (A bundled module that throws would throw once: esbuild's
 * wrapper then returns its empty exports.)
 */
function absentAsInNodeModules(bundleName) {
  return {
    name: 'absent-as-in-node-modules',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point' || args.namespace !== 'file' || !args.resolveDir) return undefined;
        if (isBuiltin(args.path)) return undefined;
        try {
          createRequire(join(args.resolveDir, 'importer.js')).resolve(args.path);
          return undefined;
        } catch {
          return { path: `./${bundleName}/${encodeURIComponent(args.path)}`, external: true };
        }
      });
    },
  };
}

/** Bundles `packages` into `file` (CommonJS, no source map: third-party code, named in the bundle's comments). */
export async function buildVendor(packages, file) {
  await esbuild({
    stdin: { contents: vendorEntry(packages), resolveDir: root, sourcefile: 'vendor-entry.cjs', loader: 'js' },
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
    plugins: [absentAsInNodeModules(basename(file))],
  });
}

/**
 * @param {string[]} packages bare specifiers, matched whole
 * @param {string[]} [vendored] those of `packages` bundled into VENDOR_FILE
 */
export function cjsByRequire(packages, vendored = []) {
  const wanted = new Set(packages);
  const inVendor = new Set(vendored);
  return {
    name: NS,
    setup(build) {
      if (inVendor.size) build.onStart(() => buildVendor(vendored, join(build.initialOptions.outdir ?? 'dist', VENDOR_FILE)));
      build.onResolve({ filter: /^[^./]/ }, (args) => (wanted.has(args.path) ? { path: args.path, namespace: NS } : undefined));
      build.onLoad({ filter: /.*/, namespace: NS }, (args) => ({
        contents: shimSource(args.path, Object.keys(requireHere(args.path)), inVendor.has(args.path) ? VENDOR_FILE : undefined),
        loader: 'js',
        resolveDir: root,
      }));
    },
  };
}
