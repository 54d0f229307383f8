import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';

// hub_accept takes how long a batch waits for a skipped message's session lock (p_wait_ms;
// accept-function.ts): a lock held longer no longer holds up every accept of the node.
export class SessionsAcceptWaitMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop function if exists hub_accept(jsonb, int)`);
    this.addSql(ACCEPT_FUNCTION_SQL);
  }
}
