import { Migration } from '@mikro-orm/migrations';

// The sessions-per-day quota counts sessions opened, in a counter a deletion does not touch: counted
// from the sessions still there, deleting each one gave its place back (any number a day on the free
// plan). One row per user and UTC day; a user's earlier days go when their next session opens.
// Idempotent (a re-run changes nothing), as db-migrate.test.ts asks of the last migration.
export class BillingSessionOpensMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists session_opens (
      user_id text not null references users(id) on delete cascade,
      day date not null,
      n integer not null,
      primary key (user_id, day))`);
    // Today's sessions still there: what the quota counted until now.
    this.addSql(`insert into session_opens (user_id, day, n)
      select user_id, (now() at time zone 'utc')::date, count(*) from sessions
       where created_at >= date_trunc('day', now() at time zone 'utc') at time zone 'utc' group by user_id
      on conflict do nothing`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists session_opens`);
  }
}
