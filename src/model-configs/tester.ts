// `POST /model-configs/test`: resolves what to test (a stored configuration, a
// draft, or a stored one with draft fields on top), runs the probe — here
// under the hub's egress rule, or on the caller's own host with `hostId` —
// and writes a detected auth mode back to the stored configuration.
import type { Config } from '../config.js';
import { fail } from '../errors.js';
import type { ApiType } from './entities.js';
import { checkBaseUrl } from './egress.js';
import { probe, type ProbeResult, type ProbeTarget } from '../model-probe/index.js';
import type { ModelConfigService } from './service.js';
import type { HostProbe } from './host-probe.js';

export interface TestInput {
  id?: string;
  apiType?: ApiType;
  baseUrl?: string;
  apiKey?: string;
  modelName?: string;
  /** Run the probe on this host of the caller's (online) instead of the hub. */
  hostId?: string;
}

export async function testConfig(cfg: Config, configs: ModelConfigService, userId: string, input: TestInput, hostProbe?: HostProbe): Promise<ProbeResult> {
  if (input.hostId !== undefined) {
    if (!hostProbe) throw fail('VALIDATION', 'body/hostId: this hub runs no hosts');
    await hostProbe.assertOwned(userId, input.hostId);
  }
  let stored: Awaited<ReturnType<ModelConfigService['withKey']>> | undefined;
  if (input.id !== undefined) stored = await configs.withKey(userId, input.id);
  const target: Partial<ProbeTarget> = {
    apiType: input.apiType ?? stored?.config.apiType,
    baseUrl: input.baseUrl ?? stored?.config.baseUrl,
    apiKey: input.apiKey ?? stored?.apiKey,
    modelName: input.modelName ?? stored?.config.modelName,
  };
  for (const k of ['apiType', 'baseUrl', 'apiKey', 'modelName'] as const) {
    if (!target[k]) throw fail('VALIDATION', `body: missing field "${k}" (give it, or the id of a stored configuration)`);
  }
  checkBaseUrl(target.baseUrl!);
  const result =
    input.hostId !== undefined
      ? await hostProbe!.run(input.hostId, target as ProbeTarget, cfg.modelTestTimeoutMs)
      : await probe(target as ProbeTarget, { timeoutMs: cfg.modelTestTimeoutMs, egress: { allowPrivate: cfg.modelTestAllowPrivate } });
  // The detected mode belongs to the stored configuration only if what was tested is what is stored.
  if (result.ok && result.authMode && stored && target.baseUrl === stored.config.baseUrl && target.apiKey === stored.apiKey && target.apiType === stored.config.apiType) {
    await configs.recordAuthMode(userId, stored.config.id, result.authMode, stored.config.version);
  }
  return result;
}
