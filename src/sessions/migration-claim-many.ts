import { Migration } from '@mikro-orm/migrations';
import { CLAIM_MANY_FUNCTION_SQL, CLAIM_FUNCTION_SQL } from './claim-function.js';
import { END_FUNCTION_SQL } from './end-function.js';

// Claims are set based (claim-function.ts): hub_claim_many claims for several hosts in one call, hub_claim
// is it for one host, and hub_end_runs claims for all the hosts of its batch at once instead of a hub_claim per host.
export class SessionsClaimManyMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(CLAIM_MANY_FUNCTION_SQL);
    this.addSql(CLAIM_FUNCTION_SQL);
    this.addSql(END_FUNCTION_SQL);
  }
}
