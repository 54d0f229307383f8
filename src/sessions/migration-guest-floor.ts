import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';
import { CLAIM_MANY_FUNCTION_SQL } from './claim-function.js';

// A run on another account's agent is charged at most what the runner's balance covers (billing's
// migration 0011a), and hub_accept took a message at any balance above zero: a guest holding one token
// ran runs of any size, as many at once as it had sessions. `session_tasks.gmin` is the balance that
// must back a guest's run (the hub's GUEST_RUN_MIN_BALANCE when it was accepted; 0 on one's own agent):
// hub_accept refuses a guest message unless the balance backs it and every such message of the sender
// running or waiting; hub_claim_many starts a waiting one only while the balance backs it and the
// sender's guest runs running. The partial index keeps those counts off the other tasks.
export class SessionsGuestFloorMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table session_tasks add column if not exists gmin bigint not null default 0`);
    this.addSql(`create index if not exists session_tasks_guest on session_tasks(user_id) where gmin > 0 and status in ('running', 'queued')`);
    this.addSql(CLAIM_MANY_FUNCTION_SQL);
    this.addSql(ACCEPT_FUNCTION_SQL);
  }
}
