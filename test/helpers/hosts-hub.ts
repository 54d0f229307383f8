// The preamble of the host-fault tests: one hub for the file, and the fake
// hosts a test opened, cut when the file ends.
import { before, after } from 'node:test';
import { startTestHub, type TestHub } from './hub.js';
import type { FakeHost } from './host.js';
import type { Config } from '../../src/config.js';

export interface HubWithHosts {
  /** Set once `before` ran. */
  t: TestHub;
  /** Hosts to terminate after the file's tests. */
  hosts: FakeHost[];
}

export function hubWithHosts(overrides: Partial<Config> = {}): HubWithHosts {
  const s = { hosts: [] } as unknown as HubWithHosts;
  before(async () => {
    s.t = await startTestHub(overrides);
  });
  after(async () => {
    for (const h of s.hosts) h.ws.terminate();
    await s.t?.close();
  });
  return s;
}
