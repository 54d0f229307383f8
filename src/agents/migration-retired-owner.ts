import { Migration } from '@mikro-orm/migrations';

// An agent's deletion retires its id for good (a row kept for ever), and the agents quota counts only
// the agents an account holds: create-then-delete wrote a row per two calls without bound. The owner of
// a retired id is kept so an account's deletions of the last day can be counted (AGENT_RETIREMENTS_PER_DAY).
export class AgentsRetiredOwnerMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table agent_ids_retired add column if not exists owner_id text`);
    this.addSql(`create index if not exists agent_ids_retired_owner on agent_ids_retired(owner_id, retired_at) where owner_id is not null`);
  }
}
