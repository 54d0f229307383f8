// The one error catalogue. Every business error is declared here once with its
// HTTP status and its string business code; domain code throws `fail(...)`,
// and the request wrapper maps it to the envelope. Callers branch on status
// and code, never on message text.

export const ErrorCatalogue = {
  VALIDATION: { status: 400, code: '4000', message: 'validation failed' },
  BAD_JSON: { status: 400, code: '4001', message: 'request body is not valid JSON' },
  BAD_CONTENT_TYPE: { status: 400, code: '4002', message: 'Content-Type must be application/json' },
  BAD_PATH: { status: 400, code: '4003', message: 'malformed path' },
  AGENT_UNUSABLE: { status: 400, code: '4004', message: 'agent cannot be used' },
  UNAUTHENTICATED: { status: 401, code: '4010', message: 'credentials missing or invalid' },
  TOKEN_EXPIRED: { status: 401, code: '4011', message: 'token expired' },
  FORBIDDEN: { status: 403, code: '4030', message: 'forbidden' },
  ADMIN_ONLY: { status: 403, code: '4031', message: 'administrator only' },
  MODE_NOT_ALLOWED: { status: 403, code: '4032', message: 'mode not allowed on this agent for this user' },
  NOT_FOUND: { status: 404, code: '4040', message: 'not found' },
  ROUTE_NOT_FOUND: { status: 404, code: '4041', message: 'no such endpoint' },
  METHOD_NOT_ALLOWED: { status: 405, code: '4050', message: 'method not allowed' },
  CONFLICT: { status: 409, code: '4090', message: 'state conflict' },
  INSUFFICIENT_BALANCE: { status: 429, code: '4091', message: 'token balance insufficient' },
  QUOTA_EXHAUSTED: { status: 429, code: '4092', message: 'quota exhausted' },
  QUEUE_FULL: { status: 409, code: '4093', message: 'queue full: 10 messages are already waiting' },
  HOST_OFFLINE: { status: 409, code: '4094', message: 'host is offline' },
  HOST_BUSY: { status: 409, code: '4095', message: 'host has a running task' },
  HOST_TOO_OLD: { status: 409, code: '4096', message: 'host CLI did not answer (too old or unresponsive)' },
  IDEMPOTENCY_MISMATCH: { status: 409, code: '4097', message: 'idempotency-key reused with a different request' },
  CONFIG_IN_USE: { status: 409, code: '4098', message: 'configuration is bound to hosts' },
  PAYLOAD_TOO_LARGE: { status: 413, code: '4130', message: 'request body too large' },
  RATE_LIMITED: { status: 429, code: '4290', message: 'too many requests' },
  STREAM_LIMIT: { status: 429, code: '4296', message: 'too many open event streams for this account' },
  INTERNAL: { status: 500, code: '5000', message: 'internal server error' },
  ENGINE_UNAVAILABLE: { status: 502, code: '5021', message: 'engine not available on the host' },
  ENGINE_FAILED: { status: 502, code: '5022', message: 'engine failed' },
  UNAVAILABLE: { status: 503, code: '5030', message: 'services needed to run are temporarily unavailable' },
  NOT_CONFIGURED: { status: 503, code: '5031', message: 'feature not configured on this hub' },
  /** A run.error code too: the run streamed more than the hub holds for one run (RUN_OUTPUT_MAX_BYTES); its engine was aborted. */
  OUTPUT_TOO_LARGE: { status: 502, code: '5029', message: 'the run produced more output than the hub holds for one run; it was stopped' },
  HOST_BAD_REPLY: { status: 502, code: '5023', message: 'host sent a malformed reply' },
  PAYMENT_PROVIDER_FAILED: { status: 502, code: '5025', message: 'the payment provider refused or did not answer' },
  HOST_TIMEOUT: { status: 504, code: '5040', message: 'host did not answer in time' },
} as const;

export type ErrorName = keyof typeof ErrorCatalogue;

export class HubError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers?: Record<string, string>;
  constructor(readonly kind: ErrorName, message?: string, headers?: Record<string, string>) {
    const e = ErrorCatalogue[kind];
    super(message ?? e.message);
    this.status = e.status;
    this.code = e.code;
    this.headers = headers;
  }
}

/** Throw a catalogued error: `throw fail('NOT_FOUND', 'agent not found')`. */
export function fail(kind: ErrorName, message?: string, headers?: Record<string, string>): HubError {
  return new HubError(kind, message, headers);
}
