// Makes the embedded database's template (db/template.ts): a fresh in-memory
// PGlite, every migration, dumped as a gzipped tarball. Run by `npm run build`
// (and so by `npm ci`'s prepare); `--if-missing` leaves an existing one alone.
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createLogger } from '../log.js';
import { openDatabase } from './orm.js';
import { startEmbedded } from './embedded.js';
import { templateFile } from './template.js';

const file = templateFile();
if (process.argv.includes('--if-missing') && existsSync(file)) process.exit(0);
const t0 = performance.now();
const log = createLogger('warn');
// From initdb and every migration, never from an earlier template (an in-memory database would load one).
const db = await openDatabase({ dataDir: ':memory:' }, log, startEmbedded(':memory:', log, () => undefined));
const tarball = Buffer.from(await (await db.dumpEmbedded!()).arrayBuffer());
await db.close();
mkdirSync(dirname(file), { recursive: true });
// Whole or not at all: a start racing this build never reads half a file.
writeFileSync(file + '.tmp', tarball);
renameSync(file + '.tmp', file);
process.stdout.write(`embedded database template: ${file} (${(tarball.length / 2 ** 20).toFixed(1)} MiB, ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
