// The settings lease of a host (hosts.settings_until): while it is held the
// host's settings are being written, and no run may start there. Runs and
// settings decide under one lock, the host row's: the lease is taken under
// that lock only when the database holds no running task of the host, and
// the accept (hub_accept) and claim (claimForHost) paths read it under the
// same lock, so a message is either accepted first (→ the apply is refused
// as busy) or waits until the lease ends. A lease that is never released
// (a node died mid-write) expires on its own.
import type { EntityManager } from '@mikro-orm/postgresql';

/** How long a lease lasts unless renewed: longer than one host request (capped at 10 s) plus database round trips. */
export const SETTINGS_LEASE_MS = 30_000;

/** A held lease: its expiry exactly as stored, which releases and renews only this holder's lease. */
export interface SettingsLease {
  hostId: string;
  until: string;
}

type Em = EntityManager;

function exec<T = any>(em: Em, sql: string, params: unknown[]): Promise<T[]> {
  return em.getConnection().execute<T[]>(sql, params, 'all', em.getTransactionContext());
}

/**
 * Takes the host's settings lease, or answers undefined when the host is busy:
 * a run is running on it (or an aborted run's engine is still stopping), or another settings write holds the lease.
 */
export async function takeSettingsLease(em: Em, hostId: string): Promise<SettingsLease | undefined> {
  return em.transactional(async (t) => {
    const tem = t as Em;
    // Lock first, decide in a later statement: under READ COMMITTED only a statement started
    // after the lock sees the tasks the previous holder (an accept or a claim) committed.
    const [h] = await exec(tem, `select id from hosts where id = ? for no key update`, [hostId]);
    if (!h) return undefined;
    const [r] = await exec<{ until: string }>(tem,
      `update hosts set settings_until = now() + make_interval(secs => ?)
        where id = ? and (settings_until is null or settings_until <= now())
          and not exists (select 1 from session_tasks where host_id = ? and status = 'running')
          -- An aborted run's engine may still be stopping on the host (sessions' engine_until).
          and not exists (select 1 from session_tasks where host_id = ? and engine_until > now())
        returning settings_until::text as until`,
      [SETTINGS_LEASE_MS / 1000, hostId, hostId, hostId]);
    return r ? { hostId, until: r.until } : undefined;
  });
}

/** Extends a held lease; false when it was lost (it expired and another holder took the host). */
export async function renewSettingsLease(em: Em, lease: SettingsLease): Promise<boolean> {
  const [r] = await exec<{ until: string }>(em,
    `update hosts set settings_until = greatest(settings_until, now() + make_interval(secs => ?))
      where id = ? and settings_until = ?::timestamptz returning settings_until::text as until`,
    [SETTINGS_LEASE_MS / 1000, lease.hostId, lease.until]);
  if (!r) return false;
  lease.until = r.until;
  return true;
}

/** Ends a held lease (no-op when it is no longer this holder's). */
export async function releaseSettingsLease(em: Em, lease: SettingsLease): Promise<void> {
  await exec(em, `update hosts set settings_until = null where id = ? and settings_until = ?::timestamptz`, [lease.hostId, lease.until]);
}
