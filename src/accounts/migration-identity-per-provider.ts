import { Migration } from '@mikro-orm/migrations';

// One identity per provider per account, held by the database: the link and the chat platform's
// confirm read before they insert, and racing calls passed the read together. Duplicates left by
// such races keep the oldest.
export const IDENTITY_PER_PROVIDER_SQL = [
  `delete from identities i using identities o
    where o.user_id = i.user_id and o.provider = i.provider and (o.created_at, o.id) < (i.created_at, i.id)`,
  `create unique index if not exists identities_user_provider on identities(user_id, provider)`,
];

export class IdentityPerProviderMigration extends Migration {
  override async up(): Promise<void> {
    for (const sql of IDENTITY_PER_PROVIDER_SQL) this.addSql(sql);
  }
}
