// Billing tables and the seeded catalogue (plans, token packs, store products).
// Prices: `tokens` is the price when paid from the balance, `cents` the price
// through a payment channel, in the catalogue's currency.
import { Migration } from '@mikro-orm/migrations';

export class BillingMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table ledger_entries (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      amount bigint not null check (amount <> 0),
      type text not null check (type in ('grant','purchase','plan','spend','redeem','refund')),
      ref text,
      note text,
      balance_after bigint not null check (balance_after >= 0),
      created_at timestamptz not null default now())`);
    this.addSql(`create index ledger_user_time on ledger_entries(user_id, created_at desc, id)`);

    this.addSql(`create table plans (
      id text primary key,
      name text not null,
      description text not null default '',
      currency text not null,
      prices jsonb not null,
      quotas jsonb not null,
      sort int not null default 0)`);
    this.addSql(`create table token_packs (
      id text primary key,
      name text not null,
      tokens bigint not null check (tokens > 0),
      price_cents int not null check (price_cents > 0),
      currency text not null,
      is_default boolean not null default false,
      sort int not null default 0)`);
    this.addSql(`create table orders (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      type text not null check (type in ('token_pack','plan')),
      status text not null check (status in ('pending','paid','cancelled')),
      item_id text not null,
      item_name text not null,
      cycle text check (cycle in ('month','quarter','year')),
      qty int not null default 1,
      tokens bigint not null default 0,
      amount_cents int not null default 0,
      currency text not null,
      pay_method text not null,
      payment_ref text,
      paid_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index orders_user_time on orders(user_id, created_at desc)`);

    this.addSql(`create table products (
      id text primary key,
      name text not null,
      description text not null default '',
      price_tokens bigint not null check (price_tokens > 0),
      stock int check (stock >= 0),
      enabled boolean not null default true,
      sort int not null default 0)`);
    this.addSql(`create table redemptions (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      product_id text not null,
      product_name text not null,
      qty int not null,
      tokens bigint not null,
      status text not null check (status in ('pending','delivered','rejected')),
      read boolean not null default true,
      reject_reason text,
      cards_enc text,
      card_count int not null default 0,
      delivered_at timestamptz,
      rejected_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index redemptions_user_time on redemptions(user_id, created_at desc)`);
    this.addSql(`create index redemptions_status on redemptions(status, created_at)`);

    const plan = (id: string, name: string, desc: string, sort: number, prices: unknown, quotas: unknown) =>
      this.addSql(
        `insert into plans (id, name, description, currency, prices, quotas, sort) values ('${id}', '${name}', '${desc}', 'CNY', '${JSON.stringify(prices)}', '${JSON.stringify(quotas)}', ${sort})`,
      );
    plan('free', 'Free', 'Try the hub with one host', 0,
      { month: { tokens: 0, cents: 0 }, quarter: { tokens: 0, cents: 0 }, year: { tokens: 0, cents: 0 } },
      { hosts: 1, agents: 3, sessionsPerDay: 20, monthlyTokens: 0 });
    plan('pro', 'Pro', 'For individuals running agents every day', 1,
      { month: { tokens: 30000, cents: 3000 }, quarter: { tokens: 81000, cents: 8100 }, year: { tokens: 288000, cents: 28800 } },
      { hosts: 5, agents: 50, sessionsPerDay: 500, monthlyTokens: 20000 });
    plan('team', 'Team', 'For teams sharing hosts and agents', 2,
      { month: { tokens: 100000, cents: 10000 }, quarter: { tokens: 270000, cents: 27000 }, year: { tokens: 960000, cents: 96000 } },
      { hosts: 50, agents: 500, sessionsPerDay: 5000, monthlyTokens: 100000 });

    this.addSql(`insert into token_packs (id, name, tokens, price_cents, currency, is_default, sort) values
      ('pack-1k', '1,000 tokens', 1000, 100, 'CNY', true, 0),
      ('pack-10k', '10,000 tokens', 10000, 950, 'CNY', false, 1),
      ('pack-100k', '100,000 tokens', 100000, 9000, 'CNY', false, 2)`);
    this.addSql(`insert into products (id, name, description, price_tokens, stock, enabled, sort) values
      ('coffee-voucher', 'Coffee voucher', 'One medium coffee at partner cafés', 2000, 500, true, 0),
      ('book-card-50', 'Book store gift card (50)', 'Gift card worth 50 at the partner book store', 5000, 200, true, 1),
      ('cloud-credit-100', 'Cloud credit (100)', 'Cloud compute credit worth 100', 10000, 100, true, 2)`);
  }
}
