import type { ModelConfig } from './entities.js';

/** First 4 and last 4 characters; a key too short to hide anything shows none of itself. */
export function keyHint(apiKey: string): string {
  return apiKey.length >= 12 ? `${apiKey.slice(0, 4)}****${apiKey.slice(-4)}` : '****';
}

/** The configuration as the API shows it: never the key, sealed or not. */
export function configView(c: ModelConfig, hostCount: number) {
  return {
    id: c.id,
    name: c.name,
    apiType: c.apiType,
    baseUrl: c.baseUrl,
    apiKeyHint: c.apiKeyHint,
    authMode: c.authMode,
    modelName: c.modelName,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
    hostCount,
  };
}
export type ConfigView = ReturnType<typeof configView>;
