import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';

// The host's settings lease (hosts/settings-lease.ts): no run starts while its settings are written.
// hub_accept reads it under the host row lock it already takes (the balance check stays).
export class HostSettingsLeaseMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table hosts add column if not exists settings_until timestamptz`);
    this.addSql(ACCEPT_FUNCTION_SQL);
  }
}
