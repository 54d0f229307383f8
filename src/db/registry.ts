// Every domain's entities and migrations, in the order migrations must run.
// A new domain adds its lines here and nowhere else in db/.
import type { EntitySchema } from '@mikro-orm/postgresql';
import type { MigrationObject } from '@mikro-orm/core';
import { accountEntities } from '../accounts/entities.js';
import { AccountsMigration } from '../accounts/migration.js';
import { hostEntities } from '../hosts/entities.js';
import { HostsMigration } from '../hosts/migration.js';
import { agentEntities } from '../agents/entities.js';
import { AgentsMigration } from '../agents/migration.js';
import { billingEntities } from '../billing/entities.js';
import { BillingMigration } from '../billing/migration.js';
import { BindingsMigration } from '../accounts/bindings-migration.js';
import { modelConfigEntities } from '../model-configs/entities.js';
import { sessionEntities } from '../sessions/entities.js';
import { SessionsMigration } from '../sessions/migration.js';
import { SessionsAcceptMigration } from '../sessions/migration-accept.js';
import { SessionsEndRunsMigration } from '../sessions/migration-end-runs.js';
import { AgentsRecordRunsMigration } from '../agents/migration-record-runs.js';
import { ModelConfigsMigration } from '../model-configs/migration.js';
import { AgentsGuestModeMigration } from '../agents/migration-guest-mode.js';
import { BillingRunChargesMigration } from '../billing/migration-run-charges.js';
import { SessionsAcceptBalanceMigration } from '../sessions/migration-accept-balance.js';
import { BillingPlanGrantsMigration } from '../billing/migration-plan-grants.js';
import { HostSettingsLeaseMigration } from '../sessions/migration-settings-lease.js';
import { SessionsClaimMigration } from '../sessions/migration-claim.js';
import { SessionsEndStartMigration } from '../sessions/migration-end-start.js';
import { SessionsAcceptSkipMigration } from '../sessions/migration-accept-skip.js';
import { LoginPkceMigration } from '../accounts/migration-login-pkce.js';
import { BillingPaymentsMigration } from '../billing/payments/migration.js';

export const allEntities: EntitySchema<any, any>[] = [...accountEntities, ...hostEntities, ...agentEntities, ...billingEntities, ...modelConfigEntities, ...sessionEntities];

export const allMigrations: MigrationObject[] = [
  { name: '0001_accounts', class: AccountsMigration },
  { name: '0002_hosts', class: HostsMigration },
  { name: '0003_agents', class: AgentsMigration },
  { name: '0004_billing', class: BillingMigration },
  { name: '0004b_bindings', class: BindingsMigration },
  { name: '0005_sessions', class: SessionsMigration },
  { name: '0006_model_configs', class: ModelConfigsMigration },
  { name: '0007_sessions_accept', class: SessionsAcceptMigration },
  { name: '0008_agents_record_runs', class: AgentsRecordRunsMigration },
  { name: '0009_sessions_end_runs', class: SessionsEndRunsMigration },
  { name: '0010a_agents_guest_mode', class: AgentsGuestModeMigration },
  { name: '0010f_billing_run_charges', class: BillingRunChargesMigration },
  { name: '0010g_sessions_accept_balance', class: SessionsAcceptBalanceMigration },
  { name: '0010h_login_pkce', class: LoginPkceMigration },
  { name: '0010i_billing_payments', class: BillingPaymentsMigration },
  { name: '0010j_host_settings_lease', class: HostSettingsLeaseMigration },
  { name: '0010k_billing_plan_grants', class: BillingPlanGrantsMigration },
  { name: '0010l_sessions_claim', class: SessionsClaimMigration },
  { name: '0010m_sessions_end_start', class: SessionsEndStartMigration },
  { name: '0010n_sessions_accept_skip', class: SessionsAcceptSkipMigration },
];
