import { Migration } from '@mikro-orm/migrations';
import { CLAIM_MANY_FUNCTION_SQL } from './claim-function.js';

// hub_claim_many checked each waiting guest message against the guest runs running before the call, so
// one claim started every waiting message of a guest on one floor of balance: a guest's picks in a call
// now count against its balance with its runs running, as hub_accept's do.
export class SessionsClaimGuestRankMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(CLAIM_MANY_FUNCTION_SQL);
  }
}
