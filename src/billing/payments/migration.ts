import { Migration } from '@mikro-orm/migrations';

// Payment channels settle orders themselves: orders gain `expired` (a pending order
// older than 30 minutes), the provider serving them, what the payer opens or scans,
// and the provider's transaction number. A notification finds its order by
// payment_ref (the out_trade_no sent to the provider), hence the unique index.
export class BillingPaymentsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table orders drop constraint if exists orders_status_check`);
    this.addSql(`alter table orders add constraint orders_status_check check (status in ('pending','paid','cancelled','expired'))`);
    this.addSql(`alter table orders add column pay_provider text, add column pay_url text, add column code_url text, add column provider_trade_no text`);
    this.addSql(`create unique index if not exists orders_payment_ref on orders(payment_ref) where payment_ref is not null`);
    this.addSql(`create index if not exists orders_pending_time on orders(created_at) where status = 'pending'`);
  }
}
