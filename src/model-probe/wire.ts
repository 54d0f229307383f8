// One POST for the connectivity test over node:http(s): the egress rule runs
// in the socket's lookup, redirects are followed only on the same origin, the
// reply is read up to a bound, and one deadline covers everything.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { EgressRefused, guardedLookup, refusal, type EgressPolicy } from './egress.js';

export interface WireReply {
  status: number;
  body: string;
}

export class WireError extends Error {
  constructor(
    readonly kind: 'timeout' | 'network' | 'path',
    message: string,
  ) {
    super(message);
  }
}

const MAX_BODY = 1024 * 1024;
const MAX_REDIRECTS = 3;

export async function postJson(
  url: URL,
  headers: Record<string, string>,
  body: string,
  opts: { signal: AbortSignal; egress: EgressPolicy },
): Promise<WireReply> {
  let target = url;
  for (let hop = 0; ; hop++) {
    const r = await once(target, headers, body, opts);
    if (r.location === undefined) return r;
    const next = new URL(r.location, target);
    if (next.origin !== url.origin) throw new WireError('path', `endpoint redirected to another host (${next.host}); not followed`);
    if (hop >= MAX_REDIRECTS) throw new WireError('path', 'too many redirects');
    target = next;
  }
}

function once(url: URL, headers: Record<string, string>, body: string, opts: { signal: AbortSignal; egress: EgressPolicy }): Promise<WireReply & { location?: string }> {
  return new Promise((resolve, reject) => {
    if (opts.signal.aborted) return reject(new WireError('timeout', 'timed out'));
    // A literal address skips DNS, so the lookup guard would not see it.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      const why = refusal(literal, opts.egress);
      if (why) return reject(new WireError('network', `refused: ${why}`));
    }
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), accept: 'application/json' },
      lookup: guardedLookup(opts.egress) as any,
      agent: false,
      signal: opts.signal,
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        return resolve({ status, body: '', location: res.headers.location });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_BODY) chunks.push(c);
      });
      res.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => reject(toWireError(e, opts.signal)));
    });
    req.on('error', (e) => reject(toWireError(e, opts.signal)));
    req.end(body);
  });
}

function toWireError(e: unknown, signal: AbortSignal): WireError {
  if (signal.aborted) return new WireError('timeout', 'timed out');
  if (e instanceof EgressRefused) return new WireError('network', `refused: ${e.message}`);
  const err = e as NodeJS.ErrnoException;
  const what = err.code === 'ENOTFOUND' ? `host not found (${(err as any).hostname ?? ''})` : err.code ? `${err.code}: ${err.message}` : err.message;
  return new WireError('network', `network error: ${what}`);
}
