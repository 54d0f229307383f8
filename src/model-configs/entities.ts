// A user's own model endpoint, and which of the user's hosts use one.
import { EntitySchema } from '@mikro-orm/postgresql';

export type ApiType = 'anthropic' | 'openai';
export type AuthMode = 'bearer' | 'x-api-key';
export type BindingStatus = 'idle' | 'pending' | 'syncing' | 'failed';

export class ModelConfig {
  id!: string;
  userId!: string;
  name!: string;
  apiType!: ApiType;
  baseUrl!: string;
  /** AES-256-GCM sealed by the vault; the key itself is never stored in clear. */
  apiKeyEnc!: string;
  apiKeyHint!: string;
  authMode: AuthMode = 'bearer';
  modelName!: string;
  /** Raised by every change that hosts must receive; bindings remember the one delivered. */
  version = 1;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

/**
 * One row per host on a custom configuration; no row = the engine's default. A row without a
 * configuration is a revert the host owes: it may hold settings it took without answering.
 */
export class HostModelBinding {
  hostId!: string;
  configId!: string | null;
  status: BindingStatus = 'syncing';
  lastError: string | null = null;
  /** Config version the host last acknowledged; null before the first success. */
  deliveredVersion: number | null = null;
  updatedAt: Date = new Date();
}

export const ModelConfigSchema = new EntitySchema<ModelConfig>({
  class: ModelConfig,
  tableName: 'model_configs',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    name: { type: 'string' },
    apiType: { type: 'string' },
    baseUrl: { type: 'string' },
    apiKeyEnc: { type: 'string' },
    apiKeyHint: { type: 'string' },
    authMode: { type: 'string' },
    modelName: { type: 'string' },
    version: { type: 'integer' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

export const HostModelBindingSchema = new EntitySchema<HostModelBinding>({
  class: HostModelBinding,
  tableName: 'host_model_bindings',
  properties: {
    hostId: { type: 'string', primary: true },
    configId: { type: 'string', nullable: true },
    status: { type: 'string' },
    lastError: { type: 'string', nullable: true },
    deliveredVersion: { type: 'integer', nullable: true },
    updatedAt: { type: 'Date' },
  },
});

export const modelConfigEntities = [ModelConfigSchema, HostModelBindingSchema];
