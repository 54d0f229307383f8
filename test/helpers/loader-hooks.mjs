// Loader hooks for test/helpers/loader.mjs: the bundled packages' specifiers
// resolve to their one pre-bundled copy; a subpath the bundle lacks is refused.
let map = {};
let packages = [];

export function initialize(data) {
  map = data.map;
  packages = data.packages;
}

export async function resolve(specifier, context, next) {
  const url = map[specifier];
  if (url) return { url, format: 'module', shortCircuit: true };
  if (packages.some((p) => specifier.startsWith(p + '/'))) {
    throw new Error(`${specifier} is not in the tests' bundle of its package (test/helpers/loader.mjs: typebox and jose by their exported subpaths without wildcards, the required packages by name alone); loading it would make a second copy`);
  }
  return next(specifier, context);
}
