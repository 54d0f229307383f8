// Asks one of the caller's model configurations for an agent draft (ai-fill):
// the configuration named, else the caller's first ones in turn until one
// answers. Same egress rule as the connectivity test, a shorter deadline.
import type { Config } from '../config.js';
import type { HubContext } from '../context.js';
import { ask } from '../model-probe/index.js';
import { parseSuggestion, suggestPrompt, SUGGEST_MAX_TOKENS, type Suggestion } from '../agents/aifill-model.js';
import { ModelConfig } from './entities.js';
import type { ModelConfigService } from './service.js';

/** Configurations tried when none is named (each can take the whole deadline). */
const CANDIDATES = 3;
const DEADLINE_MS = 30_000;

export class ModelSuggest {
  constructor(
    private readonly ctx: HubContext,
    private readonly configs: ModelConfigService,
  ) {}

  /** null: the caller has no configuration at all. A named configuration of someone else → 404. */
  async draft(userId: string, text: string, configId?: string): Promise<Suggestion | null> {
    const ids = configId !== undefined ? [(await this.configs.owned(userId, configId)).id] : await this.firstIds(userId);
    if (!ids.length) return null;
    let reason = 'bad_response';
    for (const id of ids) {
      const { config, apiKey } = await this.configs.withKey(userId, id);
      const r = await ask(
        { apiType: config.apiType, baseUrl: config.baseUrl, apiKey, modelName: config.modelName },
        suggestPrompt(text),
        SUGGEST_MAX_TOKENS,
        { timeoutMs: Math.min(this.cfg.modelTestTimeoutMs, DEADLINE_MS), egress: { allowPrivate: this.cfg.modelTestAllowPrivate } },
      );
      if (!r.ok || !r.text) {
        reason = r.reason ?? 'bad_response';
        continue;
      }
      const fields = parseSuggestion(r.text);
      if (fields) return { fields, configId: id };
      reason = 'bad_response';
    }
    return { fields: null, reason };
  }

  private get cfg(): Config {
    return this.ctx.config;
  }

  private async firstIds(userId: string): Promise<string[]> {
    const rows = await this.ctx.em().find(ModelConfig, { userId }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: CANDIDATES, fields: ['id'] });
    return rows.map((r) => r.id);
  }
}
