import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';
import { CLAIM_MANY_FUNCTION_SQL } from './claim-function.js';

// A run the hub aborts is ended for its session at once, but its engine stops on the host only later
// (SIGINT, then SIGKILL after the host's grace): `engine_until` keeps the run's slot of the host's
// capacity until the host reports the engine gone (the column is cleared) or until then, whichever
// comes first. hub_accept and hub_claim_many count such runs as running. Before, a send/abort loop on
// a capacity-1 host ran several engines on the owner's machine at once.
export class SessionsEngineStoppingMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table session_tasks add column if not exists engine_until timestamptz`);
    this.addSql(`create index if not exists session_tasks_stopping on session_tasks(host_id) where engine_until is not null`);
    this.addSql(CLAIM_MANY_FUNCTION_SQL);
    this.addSql(ACCEPT_FUNCTION_SQL);
  }
}
