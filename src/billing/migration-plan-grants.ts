import { Migration } from '@mikro-orm/migrations';

// Monthly plan tokens: users.plan_anchor_at starts a plan's 30-day periods;
// plan_grants holds one row per granted period, its key making a grant once-only.
export class BillingPlanGrantsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table users add column plan_anchor_at timestamptz`);
    this.addSql(`update users set plan_anchor_at = now() where plan_id is not null and plan_id <> 'free'`);
    this.addSql(`create table plan_grants (
      user_id text not null references users(id) on delete cascade,
      anchor_at timestamptz not null,
      period int not null,
      plan_id text not null,
      tokens bigint not null,
      created_at timestamptz not null default now(),
      primary key (user_id, anchor_at, period))`);
    this.addSql(`create index sessions_user_created on sessions(user_id, created_at)`);
  }
}
