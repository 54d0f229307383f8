import { Migration } from '@mikro-orm/migrations';
import { END_FUNCTION_SQL } from './end-function.js';

// The end of runs as a database function (see end-function.ts).
export class SessionsEndRunsMigration extends Migration {
  override async up(): Promise<void> {
    // An interrupted run's assistant rows are found by their task.
    this.addSql(`create index session_messages_task on session_messages(task_id) where role = 'assistant'`);
    this.addSql(END_FUNCTION_SQL);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists hub_end_runs(jsonb)`);
    this.addSql(`drop function if exists hub_end_runs(jsonb, jsonb)`); // END_FUNCTION_SQL's signature since 0010m
    this.addSql(`drop index if exists session_messages_task`);
  }
}
