// The master secret and the keys derived from it. SECRET_KEY wins; otherwise
// one is generated on first start into DATA_DIR/secret-key (mode 0600).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from './config.js';
import { ensurePrivateDir, restrictUmask } from './data-dir.js';

export interface Secrets {
  /** 32-byte key for JWT signing. */
  jwtKey: Uint8Array;
  /** 32-byte key for AES-256-GCM of model-endpoint keys. */
  vaultKey: Buffer;
  /** Generated=true when this start created the master secret. */
  generated: boolean;
}

export function loadSecrets(cfg: Pick<Config, 'secretKey' | 'dataDir'>): Secrets {
  let master = cfg.secretKey;
  let generated = false;
  if (!master) {
    if (cfg.dataDir === ':memory:') {
      master = randomBytes(32).toString('base64url');
    } else {
      restrictUmask();
      ensurePrivateDir(cfg.dataDir);
      const file = join(cfg.dataDir, 'secret-key');
      if (existsSync(file)) master = readFileSync(file, 'utf8').trim();
      else {
        master = randomBytes(32).toString('base64url');
        writeFileSync(file, master + '\n', { mode: 0o600 });
        generated = true;
      }
    }
  }
  const derive = (label: string) => Buffer.from(hkdfSync('sha256', master!, 'agent-hub', label, 32));
  return { jwtKey: new Uint8Array(derive('jwt')), vaultKey: derive('vault'), generated };
}
