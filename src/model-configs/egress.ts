// The syntax rule for a stored or tested baseUrl. Where the probe may connect
// (the address rule) lives with the probe in src/model-probe/egress.ts.
import { fail } from '../errors.js';

/** Syntax rule for a stored or tested baseUrl: absolute http(s), no credentials, no query or fragment. */
export function checkBaseUrl(baseUrl: string): URL {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw fail('VALIDATION', 'body/baseUrl: must be an absolute http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw fail('VALIDATION', 'body/baseUrl: must use http or https');
  if (u.username || u.password) throw fail('VALIDATION', 'body/baseUrl: must not carry credentials');
  if (u.search || u.hash) throw fail('VALIDATION', 'body/baseUrl: must not carry a query or fragment');
  return u;
}
