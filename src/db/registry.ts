// Every domain's entities and migrations, in the order migrations must run.
// A new domain adds its lines here and nowhere else in db/.
import type { EntitySchema } from '@mikro-orm/postgresql';
import type { MigrationObject } from '@mikro-orm/core';
import { accountEntities } from '../accounts/entities.js';
import { AccountsMigration } from '../accounts/migration.js';

export const allEntities: EntitySchema<any, any>[] = [...accountEntities];

export const allMigrations: MigrationObject[] = [{ name: '0001_accounts', class: AccountsMigration }];
