import { Migration } from '@mikro-orm/migrations';
import { RECORD_RUNS_FUNCTION_SQL } from './record-runs-function.js';

// The agents' run counters as a database function (see record-runs-function.ts).
export class AgentsRecordRunsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(RECORD_RUNS_FUNCTION_SQL);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists hub_record_runs(jsonb)`);
  }
}
