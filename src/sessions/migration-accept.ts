import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';

// The accept rule as a database function (see accept-function.ts).
export class SessionsAcceptMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(ACCEPT_FUNCTION_SQL);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists hub_accept(jsonb, int, int)`);
  }
}
