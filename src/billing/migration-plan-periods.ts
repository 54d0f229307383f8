import { Migration } from '@mikro-orm/migrations';

// How many 30-day periods of monthly tokens the user's current plan has paid for (users.plan_periods;
// null: not counted, as an administrator's assignment and plans from before this migration). A cycle
// paid through a channel pays for floor(days / 30) periods (a year 12, not the 13 starts its 365 days
// hold); one paid from the balance pays for none, since its tokens would pay for the plan itself
// (the team plan's quarter cost 270,000 tokens and granted 300,000). Idempotent.
export class BillingPlanPeriodsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table users add column if not exists plan_periods integer`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table users drop column if exists plan_periods`);
  }
}
