// Short-lived rows of the login and binding flows: OAuth states, phone codes,
// chat-platform binding attempts. Secrets in them are stored as hashes only.
import { Migration } from '@mikro-orm/migrations';

export class BindingsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table login_states (
      hash text primary key,
      purpose text not null check (purpose in ('login','link')),
      provider text not null,
      user_id text references users(id) on delete cascade,
      from_path text,
      expires_at timestamptz not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create table phone_codes (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      country_code text not null,
      phone text not null,
      code_hash text not null,
      attempts int not null default 0,
      expires_at timestamptz not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index phone_codes_user on phone_codes(user_id, created_at desc)`);
    this.addSql(`create unique index users_phone on users(country_code, phone) where phone is not null`);
    this.addSql(`create table chatapp_attempts (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      code_hash text not null unique,
      status text not null default 'pending' check (status in ('pending','bound')),
      chat_user_id text,
      expires_at timestamptz not null,
      bound_at timestamptz,
      created_at timestamptz not null default now())`);
    this.addSql(`create index chatapp_attempts_user on chatapp_attempts(user_id)`);
  }
}
