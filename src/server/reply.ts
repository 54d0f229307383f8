// What a route handler may return. A bare value is enveloped with 200.
import type { EventStream } from './sse.js';

export type Reply =
  | { kind: 'envelope'; status: number; data: unknown; headers?: Record<string, string> }
  | { kind: 'envelope-json'; status: number; dataJson: string }
  | { kind: 'envelope-bytes'; status: number; body: Buffer }
  | { kind: 'plain'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'empty'; status: number; headers?: Record<string, string> }
  | { kind: 'text'; status: number; body: string; contentType: string; headers?: Record<string, string> }
  | { kind: 'redirect'; status: number; location: string }
  | { kind: 'stream'; start: (stream: EventStream) => void | Promise<void> };

const REPLY = Symbol('reply');
type Tagged = Reply & { [REPLY]: true };
const tag = (r: Reply): Tagged => Object.assign(r, { [REPLY]: true as const });

export const ok = (data: unknown, status = 200, headers?: Record<string, string>) => tag({ kind: 'envelope', status, data, headers });
export const created = (data: unknown) => ok(data, 201);
/** An envelope whose data is already serialized: for read paths that cache their JSON. */
export const okJson = (dataJson: string) => tag({ kind: 'envelope-json', status: 200, dataJson });
/** The whole 200 envelope already serialized to bytes (okBytes(envelopeBytes(json))): written as is, no string to encode per request. */
export const okBytes = (body: Buffer) => tag({ kind: 'envelope-bytes', status: 200, body });
/** The bytes of the 200 envelope around `dataJson`, for read paths that cache their answer. */
export const envelopeBytes = (dataJson: string) => Buffer.from(`{"code":"0","message":"ok","data":${dataJson}}`);
/** A body without the envelope (the spec's 202 answers). */
export const plain = (status: number, body: unknown, headers?: Record<string, string>) => tag({ kind: 'plain', status, body, headers });
export const noContent = () => tag({ kind: 'empty', status: 204 });
/** A non-JSON body (a provider's notify acknowledgement, an HTML page). */
export const text = (status: number, body: string, contentType = 'text/plain; charset=utf-8', headers?: Record<string, string>) => tag({ kind: 'text', status, body, contentType, headers });
export const redirect = (location: string, status = 302) => tag({ kind: 'redirect', status, location });
export const stream = (start: (s: EventStream) => void | Promise<void>) => tag({ kind: 'stream', start });

export function isReply(v: unknown): v is Reply {
  return typeof v === 'object' && v !== null && (v as any)[REPLY] === true;
}

export function envelope(data: unknown) {
  return { code: '0', message: 'ok', data };
}
