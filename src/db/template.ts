// The embedded database's data-directory template: a tarball of a fresh,
// migrated PGlite database, made once at install (`npm run build`, run by
// `prepare`), so a first start loads it instead of running initdb and every
// migration (most of a first start's time). It lives under
// node_modules/.cache/: a fresh `npm ci` removes it with the PGlite it was made
// by, and its name carries that PGlite's version, so a template is only ever
// loaded by the PGlite that wrote it. Missing or unreadable → initdb as before.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The installed PGlite's package folder (…/node_modules/@electric-sql/pglite). */
function pglitePackageDir(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('@electric-sql/pglite package.json not found');
    dir = up;
  }
  return dir;
}

/** Where the template for the installed PGlite is (or would be) kept. */
export function templateFile(): string {
  const pkg = pglitePackageDir();
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  // pkg is node_modules/@electric-sql/pglite: the cache sits beside the packages.
  return join(pkg, '..', '..', '.cache', 'agent-hub', `pglite-${version}-data.tar.gz`);
}

/** The template's bytes, or undefined when there is none (never made, or node_modules is read-only elsewhere). */
export function readTemplate(): Blob | undefined {
  try {
    const file = templateFile();
    return existsSync(file) ? new Blob([readFileSync(file)]) : undefined;
  } catch {
    return undefined;
  }
}
