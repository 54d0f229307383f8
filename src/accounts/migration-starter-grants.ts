import { Migration } from '@mikro-orm/migrations';

// Starter tokens go to an external identity's first sign-in, decided by whether its identity row existed;
// unlinking the identity (or deleting the account) removed that row, so each sign-in after it made a new
// account with fresh starter tokens. The identities paid are kept here for good, apart from any account.
export class StarterGrantsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists starter_grants (provider text not null, subject text not null, granted_at timestamptz not null default now(), primary key (provider, subject))`);
    // The identities there are today were paid at their first sign-in.
    this.addSql(`insert into starter_grants (provider, subject) select provider, subject from identities on conflict do nothing`);
  }
}
