// The egress rule on IPv6 forms that carry an IPv4 address through a tunnel: 6to4 (2002::/16,
// the IPv4 address in its second and third groups) and Teredo (2001::/32, the client's address
// inverted in the last two groups, the server's in the third and fourth). A machine with a relay
// for either sends such a packet on to the IPv4 address inside, so each is judged as that address;
// and the deprecated site-local fec0::/10, still routed inside some networks, as private.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refusal } from '../src/model-probe/index.js';

const strict = { allowPrivate: false };
const open = { allowPrivate: true };

test('6to4: the IPv4 address inside is judged', () => {
  assert.match(refusal('2002:a9fe:a9fe::1', open) ?? '', /link-local or a cloud metadata/, 'metadata through 6to4, even with private allowed');
  assert.match(refusal('2002:7f00:1::', strict) ?? '', /private or loopback/, 'loopback through 6to4');
  assert.match(refusal('2002:0a00:0001:ffff::1', strict) ?? '', /private or loopback/, '10.0.0.1 through 6to4');
  assert.equal(refusal('2002:7f00:1::', open), null, 'loopback through 6to4 with private allowed');
  assert.equal(refusal('2002:808:808::1', strict), null, 'a public address through 6to4 is fair');
});

test('Teredo: the client address (inverted) and the server address inside are judged', () => {
  // Client 169.254.169.254 inverted is 5601:5601; server 65.54.227.120 (4136:e378), a public one.
  assert.match(refusal('2001:0:4136:e378:8000:63bf:5601:5601', open) ?? '', /link-local or a cloud metadata/, 'metadata as the Teredo client');
  // Client 10.0.0.1 inverted is f5ff:fffe.
  assert.match(refusal('2001:0:4136:e378:8000:63bf:f5ff:fffe', strict) ?? '', /private or loopback/, '10.0.0.1 as the Teredo client');
  assert.match(refusal('2001:0:7f00:1:8000:63bf:f7f7:f7f7', strict) ?? '', /private or loopback/, 'loopback as the Teredo server');
  assert.equal(refusal('2001:0:4136:e378:8000:63bf:f7f7:f7f7', strict), null, 'public server and client (8.8.8.8) are fair');
  assert.equal(refusal('2001:db8::1', strict), null, 'outside 2001::/32 it is an IPv6 address like any other');
});

test('site-local fec0::/10 is private', () => {
  assert.match(refusal('fec0::1', strict) ?? '', /private or loopback/);
  assert.equal(refusal('fec0::1', open), null);
});

test('the forms already judged keep their verdicts', () => {
  assert.match(refusal('::ffff:169.254.169.254', open) ?? '', /metadata/);
  assert.match(refusal('64:ff9b::7f00:1', strict) ?? '', /private/);
  assert.equal(refusal('2606:4700::1111', strict), null);
  assert.equal(refusal('1.1.1.1', strict), null);
});
