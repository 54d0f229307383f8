import { Migration } from '@mikro-orm/migrations';
import { CLAIM_FUNCTION_SQL } from './claim-function.js';

// Claiming a host's waiting tasks in one round trip (claim-function.ts): the host row lock is no longer held across round trips.
export class SessionsClaimMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(CLAIM_FUNCTION_SQL);
  }
}
