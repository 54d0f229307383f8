// Every domain's entities and migrations, in the order migrations must run.
// A new domain adds its lines here and nowhere else in db/.
import type { EntitySchema } from '@mikro-orm/postgresql';
import type { MigrationObject } from '@mikro-orm/core';
import { accountEntities } from '../accounts/entities.js';
import { AccountsMigration } from '../accounts/migration.js';
import { hostEntities } from '../hosts/entities.js';
import { HostsMigration } from '../hosts/migration.js';

export const allEntities: EntitySchema<any, any>[] = [...accountEntities, ...hostEntities];

export const allMigrations: MigrationObject[] = [
  { name: '0001_accounts', class: AccountsMigration },
  { name: '0002_hosts', class: HostsMigration },
];
