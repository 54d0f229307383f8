import { Migration } from '@mikro-orm/migrations';
import { END_FUNCTION_SQL } from './end-function.js';

// hub_end_runs takes an interrupted turn's streamed text from the element's `partial`, which the
// hub sent twice before (there and as the row's content): up to twice RUN_OUTPUT_MAX_BYTES of JSON
// per run end. A node still sending the content in the row writes the same text.
export class SessionsEndPartialOnceMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(END_FUNCTION_SQL);
  }
}
