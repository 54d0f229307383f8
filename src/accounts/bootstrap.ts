// First start: make sure an administrator can get in.
//  - ADMIN_API_KEY set: an admin account owns exactly that key (created if needed).
//  - otherwise, on an empty database: create an admin and write its fresh key
//    to DATA_DIR/admin-api-key (mode 0600); the log says where, never what.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HubContext } from '../context.js';
import type { AccountService } from './service.js';
import { API_KEY_PREFIX, hashSecret } from './keys.js';
import { ensurePrivateDir } from '../data-dir.js';

export async function ensureAdministrator(ctx: HubContext, accounts: AccountService): Promise<void> {
  const conn = ctx.em().getConnection();
  const { adminApiKey, dataDir } = ctx.config;
  if (adminApiKey) {
    if (!adminApiKey.startsWith(API_KEY_PREFIX) || adminApiKey.length < API_KEY_PREFIX.length + 20) {
      throw new Error(`ADMIN_API_KEY must start with "${API_KEY_PREFIX}" and carry at least 20 more characters`);
    }
    const rows = await conn.execute(`select u.role from api_keys k join users u on u.id = k.user_id where k.hash = ?`, [hashSecret(adminApiKey)]);
    if (rows.length && rows[0].role === 'admin') return;
    if (rows.length) throw new Error('ADMIN_API_KEY belongs to a non-administrator account');
    await accounts.createUser('admin', 'admin', adminApiKey);
    ctx.log.info('administrator created for ADMIN_API_KEY');
    return;
  }
  const [{ n }] = await conn.execute(`select count(*)::int as n from users where role = 'admin'`);
  if (n > 0) return;
  const { apiKey } = await accounts.createUser('admin', 'admin');
  if (dataDir === ':memory:') {
    ctx.log.info('administrator created; in-memory data dir, key not written');
    return;
  }
  ensurePrivateDir(dataDir);
  const file = join(dataDir, 'admin-api-key');
  writeFileSync(file, apiKey + '\n', { mode: 0o600 });
  ctx.log.info('administrator created; its API key is in the file', { file });
}
