import { Migration } from '@mikro-orm/migrations';

// Agent ids name one agent for good, and one account's ids never depend on another's:
// - users.agent_prefix: the owner part of an account's agent ids, unique per account (the name's
//   slug, or with -2, -3 when another account holds it), taken at its first agent. Owners of agents
//   keep the prefix their agents have (a prefix several accounts used goes to the one that used it
//   first; the others get one of their own at their next agent);
// - agent_ids_retired: ids of deleted agents, never given again (a re-created agent restarted at
//   version 1 under the old id, and an administrator's approval of the reviewed version 1 approved it);
// - agent_member_removals: members an owner removed, refused on the share link until invited again.
export class AgentsIdentityMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table users add column if not exists agent_prefix text`);
    this.addSql(`update users u set agent_prefix = p.prefix
       from (select distinct on (prefix) prefix, owner_id
               from (select split_part(id, '/', 1) as prefix, owner_id, created_at from agents) a
              order by prefix, created_at, owner_id) p
      where u.id = p.owner_id and u.agent_prefix is null`);
    this.addSql(`create unique index if not exists users_agent_prefix on users(agent_prefix) where agent_prefix is not null`);
    this.addSql(`create table if not exists agent_ids_retired (id text primary key, retired_at timestamptz not null default now())`);
    this.addSql(`create table if not exists agent_member_removals (
      agent_id text not null references agents(id) on delete cascade,
      user_id text not null references users(id) on delete cascade,
      removed_at timestamptz not null default now(),
      primary key (agent_id, user_id))`);
  }
}
