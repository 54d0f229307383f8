import { Migration } from '@mikro-orm/migrations';
import { CHARGE_FUNCTION_SQL } from '../billing/charge-function.js';

// Fewer index entries per message (WAL per message, issue 15; test/sessions-write-cost.test.ts).
//  - A message updates its session twice (accept, run end). sessions_user indexed last_msg_at, which
//    both updates change, so neither could be HOT and each wrote an entry into all four indexes of the
//    table. No read used it for its order: the sessions list sorts by coalesce(last_msg_at, created_at)
//    and counts the user's sessions, served by sessions_user_created (user_id first) as well.
//  - Room on each sessions page for the next version of its rows, so a HOT update finds it there.
//  - session_tasks.n and session_messages.n are drawn from sequences and always read with their session
//    or host (session_tasks_queued, session_messages_session): their unique indexes were one more entry
//    per task inserted, per task updated and per message row, and checked nothing a sequence does not.
//  - A charged run's ledger entry gets a time-ordered id, as its run and messages do (ids.ts,
//    timeOrderedId): the ledger's primary key grows at its right edge.
export class SessionsWriteCostMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists sessions_user`);
    this.addSql(`alter table sessions set (fillfactor = 85)`);
    this.addSql(`alter table session_tasks drop constraint if exists session_tasks_n_key`);
    this.addSql(`alter table session_messages drop constraint if exists session_messages_n_key`);
    this.addSql(CHARGE_FUNCTION_SQL);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table session_messages add constraint session_messages_n_key unique (n)`);
    this.addSql(`alter table session_tasks add constraint session_tasks_n_key unique (n)`);
    this.addSql(`alter table sessions reset (fillfactor)`);
    this.addSql(`create index sessions_user on sessions(user_id, last_msg_at desc nulls last)`);
  }
}
