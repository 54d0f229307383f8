import { Migration } from '@mikro-orm/migrations';

// A binding without a configuration: a revert the host owes (a settings command it took and never
// answered may have left a configuration in its settings file while the hub shows the default).
// The views join the configuration, so such a row reads as the default. Idempotent.
export class ModelBindingsOwedRevertMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table host_model_bindings alter column config_id drop not null`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from host_model_bindings where config_id is null`);
    this.addSql(`alter table host_model_bindings alter column config_id set not null`);
  }
}
