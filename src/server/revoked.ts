// The last frame of a stream whose credential was revoked while it was open
// (accounts/live-credentials.ts): the caller's next request is a 401 anyway,
// and a reconnecting client learns here not to try.
import type { EventStream } from './sse.js';

export const REVOKED_EVENT = 'revoked';

export function endRevoked(s: EventStream): void {
  s.send(REVOKED_EVENT, { code: 'UNAUTHENTICATED', message: 'the credential this stream was opened with was deleted, refreshed or signed out' });
  s.end();
}
