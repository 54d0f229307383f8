// Access tokens of the browser login: HS256 JWTs signed with a key derived
// from the master secret. Each carries the login's id (`sid`) so logout can
// revoke it before it expires.
import { SignJWT, jwtVerify, errors } from 'jose';
import { fail } from '../errors.js';

export interface AccessClaims {
  sub: string;
  sid: string;
}

export async function signAccessToken(key: Uint8Array, claims: AccessClaims, ttlSeconds: number): Promise<string> {
  return new SignJWT({ sid: claims.sid })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setIssuer('agent-hub')
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(key);
}

export async function verifyAccessToken(key: Uint8Array, token: string): Promise<AccessClaims> {
  try {
    const { payload } = await jwtVerify(token, key, { issuer: 'agent-hub', algorithms: ['HS256'] });
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw fail('UNAUTHENTICATED');
    return { sub: payload.sub, sid: payload.sid };
  } catch (e) {
    if (e instanceof errors.JWTExpired) throw fail('TOKEN_EXPIRED');
    throw fail('UNAUTHENTICATED');
  }
}

export function looksLikeJwt(token: string): boolean {
  return token.split('.').length === 3;
}
