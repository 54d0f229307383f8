import { Migration } from '@mikro-orm/migrations';

// A sign-in deletes its account's ended logins and ends the oldest past LOGINS_PER_ACCOUNT; a link
// start counts its account's pending attempts; every start sweeps expired attempts. Each of those
// reads by a column nothing indexed (a scan of the whole table per call).
// A login counts its refresh-token rotations (and when it last rotated): a token of an earlier rotation,
// which names its rotation under the hub's signature, presented again proves two parties hold the login.
export class LoginRowsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table auth_sessions add column if not exists rotation integer not null default 0, add column if not exists rotated_at timestamptz`);
    this.addSql(`create index if not exists auth_sessions_user on auth_sessions(user_id)`);
    this.addSql(`create index if not exists login_states_user on login_states(user_id) where user_id is not null`);
    this.addSql(`create index if not exists login_states_expires on login_states(expires_at)`);
  }
}
