// The connectivity test run on one of the caller's own hosts (`hostId` in
// `POST /model-configs/test`): the probe goes out from where the engine will
// call the endpoint, so a proxy on that machine's loopback can be tested.
// The decrypted key travels only in the `model.test` frame to the owner's host.
import { Compile } from 'typebox/compile';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import type { HostGateway } from '../hosts/gateway.js';
import { ModelTestResult } from '../../host-protocol/frames.js';
import type { ProbeResult, ProbeTarget } from '../model-probe/index.js';

const checkResult = Compile(ModelTestResult);
/** Beyond the probe's own deadline: the frame's trip there and back. */
const REPLY_MARGIN_MS = 5000;

export class HostProbe {
  constructor(
    private readonly ctx: HubContext,
    private readonly gateway: HostGateway,
  ) {}

  /** Another user's host reads as not found; an offline one as HOST_OFFLINE (409); an old CLI as HOST_TOO_OLD. */
  async assertOwned(userId: string, hostId: string): Promise<void> {
    const rows = await this.ctx.em().getConnection().execute(`select id from hosts where id = ? and user_id = ?`, [hostId, userId]);
    if (!rows.length) throw fail('NOT_FOUND', 'host not found');
  }

  async run(hostId: string, t: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
    const data = await this.gateway.request(
      hostId,
      { t: 'model.test', apiType: t.apiType, baseUrl: t.baseUrl, apiKey: t.apiKey, modelName: t.modelName, timeoutMs },
      timeoutMs + REPLY_MARGIN_MS,
    );
    if (!checkResult.Check(data)) throw fail('HOST_BAD_REPLY');
    // The host scrubs the key from endpoint messages; so does the hub, whatever the host sent.
    if (data.error) data.error = data.error.split(t.apiKey).join('***');
    return data;
  }
}
