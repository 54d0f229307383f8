// Matchers for the typed client's failures: `await assert.rejects(call, apiError(404))`.
import { ApiError } from '../../src/client/index.js';

/** Matches an ApiError with this HTTP status and, when given, the catalogue code; otherwise names what came instead. */
export function apiError(status: number, code?: string) {
  return (e: unknown): true => {
    if (!(e instanceof ApiError)) throw new Error(`expected ApiError ${status}${code ? ' ' + code : ''}, got ${String(e)}`);
    if (e.status !== status || (code !== undefined && e.code !== code)) {
      throw new Error(`expected ApiError ${status}${code ? ' ' + code : ''}, got ${e.status} ${e.code}: ${e.message}`);
    }
    return true;
  };
}

/** The ApiError a call fails with (the call must fail), for tests that check its message as well. */
export async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected the call to fail with an ApiError, it succeeded');
}
