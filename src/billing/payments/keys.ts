// Keys from the environment: PEM (with real or `\n`-escaped line breaks) or the
// bare base64 body providers' key tools print. Parsed once at start, so a bad key
// stops the hub instead of failing the first payment.
import { X509Certificate, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

const pem = (s: string) => s.replace(/\\n/g, '\n').trim();

export function privateKeyFrom(value: string, what: string): KeyObject {
  const v = pem(value);
  try {
    if (v.includes('-----BEGIN')) return createPrivateKey(v);
    const der = Buffer.from(v.replace(/\s+/g, ''), 'base64');
    try {
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    } catch {
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs1' });
    }
  } catch (e) {
    throw new Error(`${what} is not a readable RSA private key: ${(e as Error).message}`);
  }
}

/** A public key, or the public key of an X.509 certificate (WeChat Pay platform certificates). */
export function publicKeyFrom(value: string, what: string): KeyObject {
  const v = pem(value);
  try {
    if (v.includes('-----BEGIN CERTIFICATE')) return new X509Certificate(v).publicKey;
    if (v.includes('-----BEGIN')) return createPublicKey(v);
    return createPublicKey({ key: Buffer.from(v.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
  } catch (e) {
    throw new Error(`${what} is not a readable public key or certificate: ${(e as Error).message}`);
  }
}
