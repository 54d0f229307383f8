// Verification of the ID token: the one thing of the provider's answer that is
// trusted, and only after its signature (the provider's JWKS), issuer,
// audience, expiry and nonce have been checked.
import { errors, jwtVerify, type JWTPayload } from 'jose';
import { fail } from '../errors.js';
import type { ProviderMetadata } from './oidc-discovery.js';

// Asymmetric algorithms only: a symmetric (HS*) token would be signed with the client secret, which is not the provider's key.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const CLOCK_TOLERANCE_S = 30;

export async function verifyIdToken(idToken: string, meta: ProviderMetadata, clientId: string, nonce: string): Promise<JWTPayload & { sub: string }> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, meta.jwks, {
      issuer: meta.issuer,
      audience: clientId,
      algorithms: ALGORITHMS,
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: CLOCK_TOLERANCE_S,
    }));
  } catch (e) {
    // The provider's key set could not be read: the provider is at fault, not the sign-in. jose
    // raises its plain JOSEError (ERR_JOSE_GENERIC) only there: an answer other than 200, or not JSON.
    if (e instanceof errors.JWKSTimeout || e instanceof errors.JWKSInvalid || !(e instanceof errors.JOSEError) || e.code === 'ERR_JOSE_GENERIC') {
      throw fail('UNAVAILABLE', 'identity provider keys (JWKS) could not be read');
    }
    throw fail('VALIDATION', `identity provider returned an ID token that failed verification (${e.code})`);
  }
  // OpenID Connect Core §3.1.3.7: several audiences need azp = us; an azp must be us.
  if ((Array.isArray(payload.aud) && payload.aud.length > 1) || payload.azp !== undefined) {
    if (payload.azp !== clientId) throw fail('VALIDATION', 'identity provider returned an ID token issued to another client (azp)');
  }
  if (typeof payload.nonce !== 'string' || payload.nonce !== nonce) throw fail('VALIDATION', 'identity provider returned an ID token for another login attempt (nonce)');
  if (typeof payload.sub !== 'string' || !payload.sub || payload.sub.length > 255) throw fail('VALIDATION', 'identity provider returned an ID token without a usable subject');
  return payload as JWTPayload & { sub: string };
}
