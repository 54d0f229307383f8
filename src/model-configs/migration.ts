import { Migration } from '@mikro-orm/migrations';

export class ModelConfigsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table model_configs (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      name text not null,
      api_type text not null check (api_type in ('anthropic','openai')),
      base_url text not null,
      api_key_enc text not null,
      api_key_hint text not null,
      auth_mode text not null default 'bearer' check (auth_mode in ('bearer','x-api-key')),
      model_name text not null,
      version int not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index model_configs_user on model_configs(user_id, created_at)`);
    // config_id uses NO ACTION (checked at statement end), so deleting a user
    // cascades through hosts and configs together; deleting a bound config alone fails.
    this.addSql(`create table host_model_bindings (
      host_id text primary key references hosts(id) on delete cascade,
      config_id text not null references model_configs(id),
      status text not null check (status in ('idle','pending','syncing','failed')),
      last_error text,
      delivered_version int,
      updated_at timestamptz not null default now())`);
    this.addSql(`create index host_model_bindings_config on host_model_bindings(config_id)`);
  }
}
