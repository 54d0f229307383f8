import { Migration } from '@mikro-orm/migrations';

export class HostsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table hosts (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      name text not null,
      remark text,
      credential_hash text not null unique,
      cli_version text,
      protocol_version int,
      engines jsonb not null default '[]',
      capacity int not null default 1,
      last_seen_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index hosts_user on hosts(user_id)`);
    this.addSql(`create table pair_keys (
      hash text primary key,
      user_id text not null references users(id) on delete cascade,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now())`);
  }
}
