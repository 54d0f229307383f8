import { Migration } from '@mikro-orm/migrations';

// Favorites, memberships (sharing), share tokens and distinct users hang off
// agents with ON DELETE CASCADE, so deleting an agent is one statement; the
// sessions table (sessions/) references agents the same way.
export class AgentsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table agents (
      id text primary key,
      owner_id text not null references users(id) on delete cascade,
      name text not null,
      display_name text not null,
      description text not null default '',
      tags jsonb not null default '[]',
      category text not null default 'other',
      scope text not null default 'private' check (scope in ('public','private')),
      pricing text not null default 'free' check (pricing in ('free','paid')),
      usage_status text not null check (usage_status in ('draft','offline','reviewing','online')),
      review_status text check (review_status in ('pending','approved','rejected')),
      reject_reason text,
      enable boolean not null default true,
      version int not null default 1,
      host_id text references hosts(id) on delete set null,
      engine text,
      work_dir text not null default '',
      expected_input text not null default '',
      expected_output text not null default '',
      model_name text,
      usage_count bigint not null default 0,
      session_count bigint not null default 0,
      runs bigint not null default 0,
      cost bigint not null default 0,
      earn bigint not null default 0,
      last_used_at timestamptz,
      submitted_at timestamptz,
      reviewed_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index agents_owner on agents(owner_id)`);
    this.addSql(`create index agents_review on agents(review_status, submitted_at)`);
    this.addSql(`create table agent_favorites (
      user_id text not null references users(id) on delete cascade,
      agent_id text not null references agents(id) on delete cascade,
      created_at timestamptz not null default now(),
      primary key (user_id, agent_id))`);
    this.addSql(`create index agent_favorites_agent on agent_favorites(agent_id)`);
    this.addSql(`create table agent_members (
      agent_id text not null references agents(id) on delete cascade,
      user_id text not null references users(id) on delete cascade,
      via text not null check (via in ('link','invite')),
      created_at timestamptz not null default now(),
      primary key (agent_id, user_id))`);
    this.addSql(`create index agent_members_user on agent_members(user_id)`);
    this.addSql(`create table agent_share_tokens (
      token text primary key,
      agent_id text not null references agents(id) on delete cascade,
      kind text not null check (kind in ('link','invite')),
      created_at timestamptz not null default now(),
      unique (agent_id, kind))`);
    this.addSql(`create table agent_users (
      agent_id text not null references agents(id) on delete cascade,
      user_id text not null references users(id) on delete cascade,
      first_at timestamptz not null default now(),
      primary key (agent_id, user_id))`);
  }
}
