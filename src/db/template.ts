// The embedded database's data-directory template: a fresh, migrated PGlite
// database made once at install (`npm run build`, run by `prepare`), so a first
// start copies it instead of running initdb and every migration (most of a
// first start's time). It is kept twice: as a directory, which a new DATA_DIR
// on disk copies file by file (loading a tarball instead grows PGlite's
// WebAssembly memory by ≈ 100 MB for the hub's life and takes ≈ 0.7 s longer),
// and as a gzipped tarball, the only form an in-memory database can load.
// Both live under node_modules/.cache/: a fresh `npm ci` removes them with the
// PGlite they were made by, and their names carry that PGlite's version, so a
// template is only ever loaded by the PGlite that wrote it. Missing or
// unreadable → initdb as before.
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Where a new embedded database's contents come from (db/embedded.ts). */
export interface TemplateSource {
  /** A migrated data directory to copy for a new DATA_DIR on disk, or undefined. */
  dir(): string | undefined;
  /** The same database as a tarball (gzipped or not), for an in-memory database; or undefined. */
  tarball(): Blob | undefined;
}

/** No template: initdb and every migration (the template's builder, tests of a fresh database). */
export const NO_TEMPLATE: TemplateSource = { dir: () => undefined, tarball: () => undefined };

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

/** The template directory for the installed PGlite (the tarball is the same name + `.tar.gz`). */
export function templateDir(): string {
  const pkg = pglitePackageDir();
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  // pkg is node_modules/@electric-sql/pglite: the cache sits beside the packages.
  return join(pkg, '..', '..', '.cache', 'agent-hub', `pglite-${version}-data`);
}

export function templateFile(): string {
  return `${templateDir()}.tar.gz`;
}

/** A directory that holds a database (PostgreSQL writes PG_VERSION first and never removes it). */
export function holdsDatabase(dir: string): boolean {
  return existsSync(join(dir, 'PG_VERSION'));
}

/** The installed template; each form undefined when there is none (never made, or node_modules is read-only elsewhere). */
export const INSTALLED_TEMPLATE: TemplateSource = {
  dir() {
    try {
      const dir = templateDir();
      return holdsDatabase(dir) ? dir : undefined;
    } catch {
      return undefined;
    }
  },
  tarball() {
    let packed: Buffer;
    try {
      const file = templateFile();
      if (!existsSync(file)) return undefined;
      packed = readFileSync(file);
    } catch {
      return undefined;
    }
    // Unpacked here by Node's zlib: PGlite would unpack it through a DecompressionStream, ≈ 0.2 s more
    // of every in-memory start (each test hub). Bytes that are not gzip go as they are: PGlite reports them.
    try {
      return new HeldBlob(gunzipSync(packed));
    } catch {
      return new HeldBlob(packed);
    }
  },
};

/**
 * A Blob that answers arrayBuffer() with the bytes it was made from. PGlite reads the template with
 * arrayBuffer(), which Node's Blob serves through a chunked stream and a concatenation: for the 40 MB
 * tar, ≈ 0.1–0.2 s of CPU and two more copies on every in-memory start (bench/RESULTS.md, forty-first session).
 */
class HeldBlob extends Blob {
  readonly #bytes: ArrayBuffer;
  constructor(bytes: Uint8Array) {
    const buffer = bytes.buffer as ArrayBuffer; // zlib and readFileSync never answer with shared memory
    const view = new Uint8Array(buffer, bytes.byteOffset, bytes.byteLength);
    super([view]);
    this.#bytes = bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength ? buffer : view.slice().buffer;
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#bytes);
  }
}
