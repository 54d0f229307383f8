import { Migration } from '@mikro-orm/migrations';

// Issue 10, hole 1: the most permissive mode other users may run on the
// owner's machine (agents/modes.ts). Existing agents get the safe default.
export class AgentsGuestModeMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table agents add column max_guest_mode text not null default 'default'
      check (max_guest_mode in ('plan','default','accept-edits','auto'))`);
  }
}
