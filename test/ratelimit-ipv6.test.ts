// Limits per address count an IPv6 client by its /64 network, not by its full address: one
// subscriber gets a /64 (2^64 addresses), so counted per /128 a single machine could send from a
// fresh address every time and never meet its per-IP limit or its failed-credential budget.
// An IPv4 client seen as IPv4-mapped IPv6 (a dual-stack listener writes 127.0.0.1 as
// 0000:…:ffff:7f00:0001) is its IPv4 address: grouped by /64, every IPv4 client would share one limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { limitAddress } from '../src/ratelimit/address.js';
import { startTestHub } from './helpers/hub.js';

test('limitAddress: IPv4 as is, IPv4-mapped as IPv4, IPv6 by its /64, anything else untouched', () => {
  assert.equal(limitAddress('198.51.100.7'), '198.51.100.7');
  assert.equal(limitAddress('::ffff:198.51.100.7'), '198.51.100.7');
  assert.equal(limitAddress('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1'); // uWS on a dual-stack socket
  assert.equal(limitAddress('::FFFF:C633:6407'), '198.51.100.7');
  assert.equal(limitAddress('2001:db8:aa:bb::1'), '2001:db8:aa:bb::/64');
  assert.equal(limitAddress('2001:0DB8:00aa:00bb:ffff:ffff:ffff:ffff'), '2001:db8:aa:bb::/64');
  assert.equal(limitAddress('2001:db8:aa:bb:1:2:3.4.5.6'), '2001:db8:aa:bb::/64');
  assert.equal(limitAddress('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(limitAddress('0000:0000:0000:0000:0000:0000:0000:0001'), '0:0:0:0::/64');
  assert.equal(limitAddress('[2001:db8:aa:bb::9]'), '2001:db8:aa:bb::/64');
  // Not an address (a proxy's "unknown", a host:port, garbage): counted as written, as before.
  for (const s of ['unknown', '198.51.100.7:8080', '2001:db8::1::2', '1:2:3:4:5:6:7:8:9', '', 'g::1']) assert.equal(limitAddress(s), s);
});

test('behind a trusted proxy, the addresses of one IPv6 /64 share a per-IP limit; another /64 and IPv4 have their own', async () => {
  const t = await startTestHub({ rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 2, trustProxy: true });
  try {
    const from = (ip: string) => t.api('GET', '/api/v1/health', { headers: { 'x-forwarded-for': ip } }).then((r) => r.status);
    const net = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    assert.deepEqual([await from(`${net}::1`), await from(`${net}::2`), await from(`${net}:1:2:3:4`)], [200, 200, 429]);
    assert.equal(await from(`2001:db8:ffff:${randomBytes(2).toString('hex')}::1`), 200, 'another /64');
    const v4 = `203.0.113.${1 + (randomBytes(1)[0] % 200)}`;
    assert.deepEqual([await from(`::ffff:${v4}`), await from(v4), await from(v4)], [200, 200, 429], 'IPv4-mapped and IPv4 are one client');
  } finally {
    await t.close();
  }
});

test('a flood of random API keys from rotating addresses of one /64 spends one failed-credential budget', async () => {
  const BUDGET = 5;
  const t = await startTestHub({ authFailuresPerIpPerMinute: BUDGET, trustProxy: true });
  try {
    const net = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    const statuses: number[] = [];
    const before = t.hub.auth.dbLookups;
    for (let i = 0; i < BUDGET + 5; i++) {
      const key = 'ahk_' + randomBytes(24).toString('hex');
      statuses.push((await t.api('GET', '/api/v1/me', { token: key, headers: { 'x-forwarded-for': `${net}:${i.toString(16)}::1` } })).status);
    }
    assert.deepEqual(statuses.slice(BUDGET), [429, 429, 429, 429, 429], `after ${BUDGET} failures the /64 is refused: ${statuses.join(' ')}`);
    assert.ok(t.hub.auth.dbLookups - before <= BUDGET, `${t.hub.auth.dbLookups - before} key lookups for the /64`);
  } finally {
    await t.close();
  }
});
