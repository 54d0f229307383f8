// Every domain's entities and migrations, in the order migrations must run.
// A new domain adds its lines here and nowhere else in db/. A migration's
// class is imported only when it is pending (db/migrate.ts): migrations
// extend MikroORM's Migration, whose package loads the migrator and umzug,
// which a start with nothing pending does not need.
import type { EntitySchema } from '@mikro-orm/postgresql';
import type { MigrationObject } from '@mikro-orm/core';
import { accountEntities } from '../accounts/entities.js';
import { hostEntities } from '../hosts/entities.js';
import { agentEntities } from '../agents/entities.js';
import { billingEntities } from '../billing/entities.js';
import { modelConfigEntities } from '../model-configs/entities.js';
import { sessionEntities } from '../sessions/entities.js';

export const allEntities: EntitySchema<any, any>[] = [...accountEntities, ...hostEntities, ...agentEntities, ...billingEntities, ...modelConfigEntities, ...sessionEntities];

export interface LazyMigration {
  name: string;
  load(): Promise<MigrationObject['class']>;
}

/** Every migration, in the order it runs. */
export const allMigrations: readonly LazyMigration[] = [
  { name: '0001_accounts', load: async () => (await import('../accounts/migration.js')).AccountsMigration },
  { name: '0002_hosts', load: async () => (await import('../hosts/migration.js')).HostsMigration },
  { name: '0003_agents', load: async () => (await import('../agents/migration.js')).AgentsMigration },
  { name: '0004_billing', load: async () => (await import('../billing/migration.js')).BillingMigration },
  { name: '0004b_bindings', load: async () => (await import('../accounts/bindings-migration.js')).BindingsMigration },
  { name: '0005_sessions', load: async () => (await import('../sessions/migration.js')).SessionsMigration },
  { name: '0006_model_configs', load: async () => (await import('../model-configs/migration.js')).ModelConfigsMigration },
  { name: '0007_sessions_accept', load: async () => (await import('../sessions/migration-accept.js')).SessionsAcceptMigration },
  { name: '0008_agents_record_runs', load: async () => (await import('../agents/migration-record-runs.js')).AgentsRecordRunsMigration },
  { name: '0009_sessions_end_runs', load: async () => (await import('../sessions/migration-end-runs.js')).SessionsEndRunsMigration },
  { name: '0010a_agents_guest_mode', load: async () => (await import('../agents/migration-guest-mode.js')).AgentsGuestModeMigration },
  { name: '0010f_billing_run_charges', load: async () => (await import('../billing/migration-run-charges.js')).BillingRunChargesMigration },
  { name: '0010g_sessions_accept_balance', load: async () => (await import('../sessions/migration-accept-balance.js')).SessionsAcceptBalanceMigration },
  { name: '0010h_login_pkce', load: async () => (await import('../accounts/migration-login-pkce.js')).LoginPkceMigration },
  { name: '0010i_billing_payments', load: async () => (await import('../billing/payments/migration.js')).BillingPaymentsMigration },
  { name: '0010j_host_settings_lease', load: async () => (await import('../sessions/migration-settings-lease.js')).HostSettingsLeaseMigration },
  { name: '0010k_billing_plan_grants', load: async () => (await import('../billing/migration-plan-grants.js')).BillingPlanGrantsMigration },
  { name: '0010l_sessions_claim', load: async () => (await import('../sessions/migration-claim.js')).SessionsClaimMigration },
  { name: '0010m_sessions_end_start', load: async () => (await import('../sessions/migration-end-start.js')).SessionsEndStartMigration },
  { name: '0010n_sessions_accept_skip', load: async () => (await import('../sessions/migration-accept-skip.js')).SessionsAcceptSkipMigration },
  { name: '0010o_sessions_claim_many', load: async () => (await import('../sessions/migration-claim-many.js')).SessionsClaimManyMigration },
  { name: '0010p_sessions_accept_wait', load: async () => (await import('../sessions/migration-accept-wait.js')).SessionsAcceptWaitMigration },
  { name: '0010q_sessions_generic_plans', load: async () => (await import('../sessions/migration-generic-plans.js')).SessionsGenericPlansMigration },
  { name: '0010r_billing_earn_covered', load: async () => (await import('../billing/migration-earn-covered.js')).BillingEarnCoveredMigration },
  { name: '0010s_message_write_cost', load: async () => (await import('../sessions/migration-write-cost.js')).SessionsWriteCostMigration },
  { name: '0010t_sessions_interrupted_rows', load: async () => (await import('../sessions/migration-interrupted-rows.js')).SessionsInterruptedRowsMigration },
  { name: '0010u_billing_ledger_ref', load: async () => (await import('../billing/migration-ledger-ref.js')).BillingLedgerRefMigration },
  { name: '0010v_sessions_end_partial_once', load: async () => (await import('../sessions/migration-end-partial-once.js')).SessionsEndPartialOnceMigration },
  { name: '0010w_billing_charge_one_statement', load: async () => (await import('../billing/migration-charge-one-statement.js')).BillingChargeOneStatementMigration },
  { name: '0010x_billing_session_opens', load: async () => (await import('../billing/migration-session-opens.js')).BillingSessionOpensMigration },
  { name: '0010y_billing_plan_periods', load: async () => (await import('../billing/migration-plan-periods.js')).BillingPlanPeriodsMigration },
  { name: '0010z_model_bindings_owed_revert', load: async () => (await import('../model-configs/migration-owed-revert.js')).ModelBindingsOwedRevertMigration },
  { name: '0011a_billing_guest_charge_cap', load: async () => (await import('../billing/migration-guest-charge-cap.js')).BillingGuestChargeCapMigration },
  { name: '0011b_sessions_engine_stopping', load: async () => (await import('../sessions/migration-engine-stopping.js')).SessionsEngineStoppingMigration },
  { name: '0011c_agents_identity', load: async () => (await import('../agents/migration-identity.js')).AgentsIdentityMigration },
  { name: '0011d_identity_per_provider', load: async () => (await import('../accounts/migration-identity-per-provider.js')).IdentityPerProviderMigration },
  { name: '0011e_sessions_guest_floor', load: async () => (await import('../sessions/migration-guest-floor.js')).SessionsGuestFloorMigration },
  { name: '0011f_sessions_stored_bytes', load: async () => (await import('../sessions/migration-stored-bytes.js')).SessionsStoredBytesMigration },
  { name: '0011g_accounts_login_rows', load: async () => (await import('../accounts/migration-login-rows.js')).LoginRowsMigration },
  { name: '0011h_agents_retired_owner', load: async () => (await import('../agents/migration-retired-owner.js')).AgentsRetiredOwnerMigration },
  { name: '0011i_accounts_starter_grants', load: async () => (await import('../accounts/migration-starter-grants.js')).StarterGrantsMigration },
  { name: '0011j_sessions_claim_guest_rank', load: async () => (await import('../sessions/migration-claim-guest-rank.js')).SessionsClaimGuestRankMigration },
];
