import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';
import { END_FUNCTION_SQL } from './end-function.js';

// What a session stores was bounded only by the rate limits: each message ≤ 100,000 characters and
// each run ≤ RUN_STORED_MAX_BYTES, but any number of them (a host of the account's own reporting no
// usage made every run free). `sessions.stored_bytes` counts a session's messages and its runs'
// output as they are written (hub_accept, hub_end_runs, the mid-run write; a cancelled waiting
// message takes its bytes back), and hub_accept refuses a message that would take it over the
// hub's SESSION_STORED_MAX_BYTES ('session_full'). Sessions older than this column count from 0.
export class SessionsStoredBytesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table sessions add column if not exists stored_bytes bigint not null default 0`);
    this.addSql(ACCEPT_FUNCTION_SQL);
    this.addSql(END_FUNCTION_SQL);
  }
}
