import { Migration } from '@mikro-orm/migrations';

export class AccountsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table users (
      id text primary key,
      name text not null,
      role text not null default 'user' check (role in ('user','admin')),
      email text, phone text, country_code text,
      balance bigint not null default 0,
      plan_id text, plan_expire_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create table api_keys (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      name text not null,
      hash text not null unique,
      preview text not null,
      last_used_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index api_keys_user on api_keys(user_id)`);
    this.addSql(`create table auth_sessions (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      refresh_hash text not null unique,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      created_at timestamptz not null default now())`);
    this.addSql(`create table identities (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      provider text not null,
      subject text not null,
      display_name text,
      created_at timestamptz not null default now(),
      unique (provider, subject))`);
  }
}
