// Test seeding that has no public API path: a paired host row for a user,
// reporting the given engines (the host channel owns real pairing).
import { randomBytes } from 'node:crypto';
import type { TestHub } from './hub.js';
import { Host } from '../../src/hosts/entities.js';
import { newId } from '../../src/ids.js';

export async function seedHost(t: TestHub, userId: string, engines: string[] = ['claude-code'], name = 'laptop'): Promise<string> {
  const em = t.hub.ctx.em();
  const h = Object.assign(new Host(), {
    id: newId('hst'),
    userId,
    name,
    credentialHash: randomBytes(32).toString('hex'),
    engines: engines.map((id) => ({ id, displayName: id })),
  });
  await em.persist(h).flush();
  return h.id;
}
