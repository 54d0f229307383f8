import { Migration } from '@mikro-orm/migrations';
import { END_FUNCTION_SQL } from './end-function.js';

// hub_end_runs starts the next waiting runs of its hosts in the same call (hub_claim inside it, see
// end-function.ts): it takes the hosts' capacities, so it is a new signature and the old one goes.
export class SessionsEndStartMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop function if exists hub_end_runs(jsonb)`);
    this.addSql(END_FUNCTION_SQL);
  }
}
