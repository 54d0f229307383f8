// Protocol version of the hub ↔ host channel, carried in `hello`.
// Change policy (see host-protocol/README.md): additive only. A new frame gets
// a new tag; a new field is optional; a tag or field is never reused with
// another meaning. Bump PROTOCOL_VERSION only for a change an older peer
// cannot ignore; the hub accepts MIN_PROTOCOL_VERSION..PROTOCOL_VERSION.
export const PROTOCOL_VERSION = 1;
export const MIN_PROTOCOL_VERSION = 1;

/** Path of the WebSocket endpoint on the hub. */
export const HOST_WS_PATH = '/api/v1/hosts/ws';

/** WebSocket close codes the hub uses, and whether the host should reconnect. */
export const CloseCodes = {
  NORMAL: { code: 1000, reconnect: false, reason: 'normal' },
  GOING_AWAY: { code: 1001, reconnect: true, reason: 'hub shutting down; reconnect' },
  BAD_FRAME: { code: 4400, reconnect: true, reason: 'malformed frame' },
  UNAUTHORIZED: { code: 4401, reconnect: false, reason: 'credential invalid or revoked' },
  HOST_DELETED: { code: 4404, reconnect: false, reason: 'host deleted' },
  VERSION: { code: 4406, reconnect: false, reason: 'protocol version not supported' },
  HELLO_TIMEOUT: { code: 4408, reconnect: true, reason: 'no hello in time' },
  REPLACED: { code: 4409, reconnect: false, reason: 'another connection took over this host' },
  HEARTBEAT: { code: 4410, reconnect: true, reason: 'heartbeat missed' },
  BACKPRESSURE: { code: 4429, reconnect: true, reason: 'host is not reading its frames' },
  HELLO_TWICE: { code: 4412, reconnect: true, reason: 'hello sent twice or a frame before hello' },
  FRAME_RATE: { code: 4430, reconnect: true, reason: 'too many frames: over the frame rate or the bytes held for the channel' },
} as const;

export type CloseCode = (typeof CloseCodes)[keyof typeof CloseCodes];
const byNumber = new Map<number, CloseCode>(Object.values(CloseCodes).map((c) => [c.code, c]));
/** The table row for a close code received from the hub; unknown codes reconnect. */
export function closeCodeInfo(code: number): CloseCode | { code: number; reconnect: true; reason: string } {
  return byNumber.get(code) ?? { code, reconnect: true, reason: 'connection lost' };
}
