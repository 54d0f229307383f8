// Model configurations: create, read, update, delete. Pure domain, no HTTP.
// The key is sealed by the vault before it reaches the database and opened
// only to test it or to deliver it to a host.
import { MODEL_CONFIGS_PER_ACCOUNT, refuseOverCap } from '../account-caps.js';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { newId } from '../ids.js';
import { ModelConfig, type ApiType, type AuthMode } from './entities.js';
import type { Vault } from './vault.js';
import { configView, keyHint } from './views.js';
import { checkBaseUrl } from './egress.js';

export interface ConfigInput {
  name: string;
  apiType: ApiType;
  baseUrl: string;
  apiKey: string;
  authMode?: AuthMode;
  modelName: string;
}

/** Fields whose change must reach the hosts (the six settings keys derive from them). */
const DELIVERED: Array<keyof ConfigInput> = ['baseUrl', 'apiKey', 'authMode', 'modelName'];

export class ModelConfigService {
  /** Called after a committed change that bound hosts must receive. */
  onDeliveredChange: (configId: string) => Promise<void> | void = () => {};

  constructor(
    private readonly ctx: HubContext,
    private readonly vault: Vault,
  ) {}

  async list(userId: string) {
    const em = this.ctx.em();
    const items = await em.find(ModelConfig, { userId }, { orderBy: { createdAt: 'desc', id: 'asc' } });
    const counts = await this.hostCounts(items.map((c) => c.id));
    return { items: items.map((c) => configView(c, counts.get(c.id) ?? 0)), total: items.length };
  }

  async get(userId: string, id: string) {
    const c = await this.owned(userId, id);
    return configView(c, (await this.hostCounts([id])).get(id) ?? 0);
  }

  async create(userId: string, input: ConfigInput) {
    checkBaseUrl(input.baseUrl);
    refuseOverCap(await this.ctx.em().count(ModelConfig, { userId }), MODEL_CONFIGS_PER_ACCOUNT, 'model configurations');
    const c = Object.assign(new ModelConfig(), {
      id: newId('mc-'),
      userId,
      name: input.name,
      apiType: input.apiType,
      baseUrl: input.baseUrl,
      apiKeyHint: keyHint(input.apiKey),
      authMode: input.authMode ?? 'bearer',
      modelName: input.modelName,
    });
    c.apiKeyEnc = await this.vault.seal(input.apiKey, c.id);
    await this.ctx.em().persist(c).flush();
    return configView(c, 0);
  }

  async update(userId: string, id: string, patch: Partial<ConfigInput>) {
    if (patch.baseUrl !== undefined) checkBaseUrl(patch.baseUrl);
    const em = this.ctx.em();
    const c = await this.owned(userId, id, em);
    const delivered = DELIVERED.some((k) => patch[k] !== undefined && (k === 'apiKey' || patch[k] !== (c as any)[k]));
    if (patch.name !== undefined) c.name = patch.name;
    if (patch.apiType !== undefined) c.apiType = patch.apiType;
    if (patch.baseUrl !== undefined) c.baseUrl = patch.baseUrl;
    if (patch.authMode !== undefined) c.authMode = patch.authMode;
    if (patch.modelName !== undefined) c.modelName = patch.modelName;
    if (patch.apiKey !== undefined) {
      c.apiKeyEnc = await this.vault.seal(patch.apiKey, c.id);
      c.apiKeyHint = keyHint(patch.apiKey);
    }
    if (delivered) c.version += 1;
    c.updatedAt = new Date();
    await em.flush();
    if (delivered) await this.changed(c.id);
    return configView(c, (await this.hostCounts([id])).get(id) ?? 0);
  }

  async remove(userId: string, id: string) {
    const em = this.ctx.em();
    const c = await this.owned(userId, id, em);
    const bound = (await this.hostCounts([id])).get(id) ?? 0;
    if (bound > 0) throw fail('CONFIG_IN_USE', `configuration is bound to ${bound} host(s); revert them first`);
    try {
      await em.remove(c).flush();
    } catch (e) {
      // A binding created between the count and the delete: the foreign key refuses it.
      if ((e as { code?: string }).code === '23503') throw fail('CONFIG_IN_USE');
      throw e;
    }
    return { deleted: true };
  }

  /**
   * Writes back the auth mode a passing connectivity test detected, if the configuration is still the
   * version that was tested: a test takes up to minutes, and an edit meanwhile (another endpoint, key
   * or an explicit mode) must not get the old endpoint's mode written over it.
   */
  async recordAuthMode(userId: string, id: string, authMode: AuthMode, testedVersion: number): Promise<void> {
    const rows = await this.ctx.em().getConnection().execute(
      `update model_configs set auth_mode = ?, version = version + 1, updated_at = now()
        where id = ? and user_id = ? and version = ? and auth_mode <> ? returning id`,
      [authMode, id, userId, testedVersion, authMode],
    );
    if (rows.length) await this.changed(id);
  }

  /** The change is committed; a failure to start the re-sync must not fail the request. */
  private async changed(configId: string): Promise<void> {
    try {
      await this.onDeliveredChange(configId);
    } catch (e) {
      this.ctx.log.warn('model config re-sync could not start', { configId, err: e instanceof Error ? e.message : String(e) });
    }
  }

  /** The configuration with its key opened; only for tests of it and deliveries to hosts. */
  async withKey(userId: string, id: string): Promise<{ config: ModelConfig; apiKey: string }> {
    const config = await this.owned(userId, id);
    return { config, apiKey: await this.vault.open(config.apiKeyEnc, config.id) };
  }

  async openKey(config: ModelConfig): Promise<string> {
    return this.vault.open(config.apiKeyEnc, config.id);
  }

  async owned(userId: string, id: string, em = this.ctx.em()): Promise<ModelConfig> {
    const c = await em.findOne(ModelConfig, { id, userId });
    if (!c) throw fail('NOT_FOUND', 'model configuration not found');
    return c;
  }

  private async hostCounts(ids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (!ids.length) return out;
    const rows: Array<{ config_id: string; n: string | number }> = await this.ctx
      .em()
      .getConnection()
      .execute(`select config_id, count(*) as n from host_model_bindings where config_id in (${ids.map(() => '?').join(',')}) group by config_id`, ids);
    for (const r of rows) out.set(r.config_id, Number(r.n));
    return out;
  }
}

