// The web console (console/, Preact) served at `/`. The hub bundles it with
// esbuild in memory on first request (then cached for the process), so
// `npm start` on a fresh checkout serves it with no build step. Assets are
// served under content-hashed names from a fixed map: no request path ever
// reaches the file system. Unknown non-API paths answer the index
// (client-side routing); /api/* keeps its JSON 404s.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { HttpApi, Route } from './http.js';
import { text } from './reply.js';
import { fail } from '../errors.js';

export const CONSOLE_ASSETS = '/console';
const CACHE_INDEX = 'no-cache';
// Names carry the content hash: a new bundle gets a new name.
const CACHE_ASSET = 'public, max-age=31536000, immutable';
/**
 * The console page's policy: its own origin is the only source of scripts, styles and connections (the
 * bundle is two files, the API is same-origin), nothing may frame it (its buttons spend tokens, approve
 * agents, change the phone: clickjacking), and other sites get no path in the referrer (an invitation's
 * path holds its token).
 */
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  // A page that opened the console (window.open) keeps no handle to it: it could send the signed-in tab elsewhere.
  'Cross-Origin-Opener-Policy': 'same-origin',
};

interface Bundle {
  index: string;
  assets: Map<string, { body: string; type: string }>;
}

/** The console's source folder: beside src/ from source (tsx), beside dist/ when built. */
function consoleDir(): string {
  for (const rel of ['../../console/', '../console/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(dir + 'main.tsx')) return dir;
  }
  throw new Error('console sources (console/main.tsx) not found');
}

async function build(): Promise<Bundle> {
  const { build } = await import('esbuild');
  const dir = consoleDir();
  const out = await build({
    entryPoints: [dir + 'main.tsx'],
    bundle: true,
    write: false,
    outdir: '/console-out',
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'silent',
    legalComments: 'none',
  });
  const assets = new Map<string, { body: string; type: string }>();
  let js = '';
  let css = '';
  for (const f of out.outputFiles) {
    const hash = createHash('sha256').update(f.contents).digest('hex').slice(0, 12);
    if (f.path.endsWith('.js')) assets.set((js = `app.${hash}.js`), { body: f.text, type: 'text/javascript; charset=utf-8' });
    else if (f.path.endsWith('.css')) assets.set((css = `app.${hash}.css`), { body: f.text, type: 'text/css; charset=utf-8' });
  }
  const index = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Hub</title>
${css ? `<link rel="stylesheet" href="${CONSOLE_ASSETS}/${css}">\n` : ''}</head>
<body>
<div id="app"><noscript>The Agent Hub console needs JavaScript.</noscript></div>
<script type="module" src="${CONSOLE_ASSETS}/${js}"></script>
</body>
</html>
`;
  return { index, assets };
}

let bundle: Promise<Bundle> | undefined;
/** One build per process; a failed build is retried on the next request. */
function getBundle(): Promise<Bundle> {
  bundle ??= build().catch((e) => {
    bundle = undefined;
    throw e;
  });
  return bundle;
}

export function consoleRoutes(api: HttpApi): void {
  const index: Route = {
    method: 'GET', path: '/', auth: 'none', unlimited: true,
    doc: { summary: 'The web console', raw: { status: 200, contentType: 'text/html', description: 'The console page (unknown non-API paths answer it too, for client-side routing).' } },
    handler: async () => text(200, (await getBundle()).index, 'text/html; charset=utf-8', { 'Cache-Control': CACHE_INDEX, 'X-Content-Type-Options': 'nosniff', ...PAGE_HEADERS }),
  };
  api.route(index);
  api.route({
    method: 'GET', path: `${CONSOLE_ASSETS}/:file`, auth: 'none', unlimited: true,
    doc: { summary: 'A file of the console bundle', raw: { status: 200, description: 'A content-hashed script or stylesheet named by the console page; any other name is 404.' } },
    handler: async (r) => {
      const a = (await getBundle()).assets.get(r.params.file);
      if (!a) throw fail('NOT_FOUND', 'no such file');
      return text(200, a.body, a.type, { 'Cache-Control': CACHE_ASSET, 'X-Content-Type-Options': 'nosniff' });
    },
  });
  api.fallback(index);
}
