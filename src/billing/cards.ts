// Delivered card numbers and passwords are stored encrypted (AES-256-GCM
// under a key derived from the vault key) and are never logged; they leave
// the hub only through the reveal endpoints.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export interface Card {
  no?: string;
  pwd?: string;
}

export class CardBox {
  private readonly key: Buffer;
  constructor(vaultKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', vaultKey, 'agent-hub', 'redeem-cards', 32));
  }

  /** `aad` binds the ciphertext to one redemption, so it cannot be moved to another row. */
  seal(cards: Card[], aad: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([c.update(JSON.stringify(cards), 'utf8'), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
  }

  open(sealed: string, aad: string): Card[] {
    const buf = Buffer.from(sealed, 'base64');
    const d = createDecipheriv('aes-256-gcm', this.key, buf.subarray(0, 12));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(buf.subarray(12, 28));
    return JSON.parse(Buffer.concat([d.update(buf.subarray(28)), d.final()]).toString('utf8'));
  }
}
