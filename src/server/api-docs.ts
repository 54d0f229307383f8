// The API reference: the OpenAPI document at /api/v1/openapi.json and a page
// at /api/docs rendered by swagger-ui-dist, whose files are served from the
// hub's own node_modules (a fixed whitelist: no path from the request ever
// reaches the file system).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { TSchema } from 'typebox';
import type { HttpApi } from './http.js';
import { text } from './reply.js';
import { fail } from '../errors.js';
import { buildOpenApi } from './openapi.js';
import Type from 'typebox';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/docs';

/** The renderer's files a page needs, by the name they are served under. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const CACHE_DOC = 'public, max-age=300';
// The asset bytes change only with the pinned package version (and a new hub build).
const CACHE_ASSET = 'public, max-age=86400';

function assetDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** The renderer's start, a file of its own: the page's policy runs no inline script. */
const INIT = `window.ui = SwaggerUIBundle({ url: '${OPENAPI_PATH}', dom_id: '#swagger-ui', deepLinking: true });\n`;

/**
 * The page is on the console's origin: no inline script, no framing (clickjacking), no opener's
 * handle, no sniffing. Swagger UI sets inline styles, and shows images as data: URLs.
 */
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Agent Hub API</title>
<link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

/** Registers the document and the page; call after every other route (the document is built on first request, from the full table). */
export function apiDocsRoutes(api: HttpApi, events: Record<string, TSchema>): void {
  let doc: string | undefined;
  api.route({
    method: 'GET', path: OPENAPI_PATH, auth: 'none',
    doc: { summary: 'This document', raw: { status: 200, contentType: 'application/json', description: 'The OpenAPI 3.1 document (not enveloped).', schema: Type.Object({ openapi: Type.Literal('3.1.0'), info: Type.Object({}), paths: Type.Object({}), components: Type.Object({}) }) } },
    handler: () => {
      doc ??= JSON.stringify(buildOpenApi({ routes: api.routes, events, version: '1' }));
      return text(200, doc, 'application/json; charset=utf-8', { 'Cache-Control': CACHE_DOC });
    },
  });
  api.route({
    method: 'GET', path: DOCS_PATH, auth: 'none',
    doc: { summary: 'The API reference page', raw: { status: 200, contentType: 'text/html', description: 'An HTML page rendering the OpenAPI document.' } },
    handler: () => text(200, PAGE, 'text/html; charset=utf-8', { 'Cache-Control': CACHE_DOC, ...PAGE_HEADERS }),
  });
  const cache = new Map<string, string>();
  api.route({
    method: 'GET', path: `${DOCS_PATH}/:file`, auth: 'none',
    doc: { summary: 'A file of the reference page renderer', raw: { status: 200, description: '`swagger-ui.css` (text/css), `swagger-ui-bundle.js` or `init.js` (text/javascript); any other name is 404.' } },
    handler: (r) => {
      const name = r.params.file;
      if (name === 'init.js') return text(200, INIT, 'text/javascript; charset=utf-8', { 'Cache-Control': CACHE_DOC, 'X-Content-Type-Options': 'nosniff' });
      if (!Object.hasOwn(ASSETS, name)) throw fail('NOT_FOUND', 'no such file');
      let body = cache.get(name);
      if (body === undefined) cache.set(name, (body = readFileSync(join(assetDir(), name), 'utf8')));
      return text(200, body, ASSETS[name], { 'Cache-Control': CACHE_ASSET, 'X-Content-Type-Options': 'nosniff' });
    },
  });
}
