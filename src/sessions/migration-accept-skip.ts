import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';

// hub_accept skips a session another transaction holds locked and answers 'retry' for its message
// (accept-function.ts): a batch no longer waits for a run's end that holds a few of its sessions.
export class SessionsAcceptSkipMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(ACCEPT_FUNCTION_SQL);
  }
}
