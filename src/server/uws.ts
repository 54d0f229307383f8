// The only file that imports uWebSockets.js. To move to the official build,
// change the package name below.
//
// The npm build silently falls back to a slow, incomplete JS shim when its
// native binding does not load (e.g. on Node 22). We load the binding
// ourselves and refuse to start without it.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UWS from '@trufflesuite/uws-js-unofficial/docs/index.js';

const PACKAGE = '@trufflesuite/uws-js-unofficial';
const require = createRequire(import.meta.url);

function loadNative(): typeof UWS {
  const pkgDir = dirname(require.resolve(`${PACKAGE}/package.json`));
  const file = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  try {
    return require(file);
  } catch (e) {
    throw new Error(
      `uWebSockets.js native binding did not load for Node ${process.version} (${process.platform}/${process.arch}, ABI ${process.versions.modules}). ` +
        `The hub runs on Node 20 (see .nvmrc) and will not start on the JS fallback. Cause: ${(e as Error).message}`,
    );
  }
}

export const uws = loadNative();
export type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_listen_socket } from '@trufflesuite/uws-js-unofficial/docs/index.js';
