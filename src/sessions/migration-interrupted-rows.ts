import { Migration } from '@mikro-orm/migrations';
import { END_FUNCTION_SQL } from './end-function.js';

// One index entry fewer per assistant row (after 0010s, test/sessions-write-cost.test.ts):
// session_messages_task (task_id, for assistant rows) was read only to mark an interrupted run's
// rows, which hub_end_runs now finds from the run's user message on in session_messages_session.
export class SessionsInterruptedRowsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(END_FUNCTION_SQL);
    this.addSql(`drop index if exists session_messages_task`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index session_messages_task on session_messages(task_id) where role = 'assistant'`);
  }
}
