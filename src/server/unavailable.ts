// "The database or Redis cannot be reached right now" as opposed to "this
// query is wrong": connection refused or dropped, the server shutting down or
// starting, no pooled connection in time, ioredis giving up on a command.
// Such a failure answers 503 (the spec's "temporarily unavailable": retry
// later), never 500.

/** Node's socket errors met when the server is down or went away. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** SQLSTATE classes: 08 connection exception, 57P operator intervention (shutdown, crash, starting up). */
const SQLSTATE = /^(08|57P0[1-3])/;
/** Messages of pg, knex and ioredis that carry no code. */
const MESSAGES = /Connection terminated|Knex: Timeout acquiring a connection|Client has encountered a connection error|^Connection is closed\.$|^Stream isn't writeable/;
/** Error classes of MikroORM, knex and ioredis. */
const NAMES = new Set(['KnexTimeoutError', 'ConnectionException', 'MaxRetriesPerRequestError']);

export function isBackendUnavailable(e: unknown): boolean {
  // MikroORM copies the driver error's fields onto its own; pg sometimes wraps the socket error in `cause`.
  for (let x = e, depth = 0; x && typeof x === 'object' && depth < 4; x = (x as { cause?: unknown }).cause, depth++) {
    const { code, name, message } = x as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || SQLSTATE.test(code))) return true;
    if (typeof name === 'string' && NAMES.has(name)) return true;
    if (typeof message === 'string' && MESSAGES.test(message)) return true;
  }
  return false;
}
