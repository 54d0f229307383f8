// The hub names the host's ping interval in welcome.heartbeatMs. The schema sets only a minimum,
// and Node runs a setInterval of 2^31 ms or more every millisecond: a hostile or misconfigured hub
// would make the host ping a thousand times a second. The host holds the interval to its own bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pingIntervalMs, HEARTBEAT_MAX_MS } from '../src/host-cli/channel.js';

test('a heartbeat past the host\'s bound is held to it, never to the 1 ms loop Node makes of 2^31', () => {
  assert.equal(pingIntervalMs(2 ** 31), HEARTBEAT_MAX_MS);
  assert.equal(pingIntervalMs(Number.MAX_SAFE_INTEGER), HEARTBEAT_MAX_MS);
  assert.ok(HEARTBEAT_MAX_MS < 2 ** 31 - 1);
});

test('a heartbeat within bounds is kept as the hub sent it', () => {
  assert.equal(pingIntervalMs(5000), 5000);
  assert.equal(pingIntervalMs(1000), 1000);
});
