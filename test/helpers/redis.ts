// Redis for tests: REDIS_URL when set and answering, else a reason to skip.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

let probed: Promise<string | undefined> | undefined;

/** Resolves to the URL, or undefined (after printing why) when tests needing Redis must skip. */
export async function redisUrlOrSkip(): Promise<{ url: string } | { skip: string }> {
  const url = process.env.REDIS_URL;
  if (!url) return { skip: 'REDIS_URL is not set' };
  probed ??= (async () => {
    const r = new Redis(url, { lazyConnect: true, connectTimeout: 1500, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => {});
    try {
      await r.connect();
      await r.ping();
      return undefined;
    } catch (e) {
      return `Redis at REDIS_URL is unreachable (${e instanceof Error ? e.message : e})`;
    } finally {
      r.disconnect();
    }
  })();
  const why = await probed;
  return why ? { skip: why } : { url };
}

/** A key/channel prefix of its own, so concurrent test hubs sharing one Redis do not meet. */
export function testPrefix(): string {
  return `t${randomBytes(4).toString('hex')}:`;
}
