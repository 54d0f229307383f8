// Each login attempt keeps its PKCE verifier and nonce next to its state
// (single use, expiring). Attempts started before this have neither and are dropped.
import { Migration } from '@mikro-orm/migrations';

export class LoginPkceMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`delete from login_states`);
    this.addSql(`alter table login_states add column code_verifier text not null, add column nonce text not null`);
  }
}
