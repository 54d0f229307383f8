// parseKeepingNumbers (src/host-cli/json-numbers.ts): the owner's settings.json numbers through a parse
// and back, whatever else the file holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseKeepingNumbers } from '../src/host-cli/json-numbers.js';

const roundTrip = (text: string) => {
  const p = parseKeepingNumbers(text);
  return p.restore(JSON.stringify(p.json));
};

test('numbers a double keeps are plain numbers; others come back as written; strings that look like numbers are left alone', () => {
  const p = parseKeepingNumbers('{"a":1,"b":-2.5,"c":12345678901234567890,"s":"99999999999999999999","e":"\\"1e400\\"","x":[1E5,-0,0.1]}');
  const o = p.json as Record<string, unknown>;
  assert.equal(o.a, 1);
  assert.equal(o.b, -2.5);
  assert.equal(o.s, '99999999999999999999');
  assert.equal(o.e, '"1e400"');
  assert.equal(typeof o.c, 'string', 'carried as a marker through the parse');
  assert.equal(p.restore(JSON.stringify(o)), '{"a":1,"b":-2.5,"c":12345678901234567890,"s":"99999999999999999999","e":"\\"1e400\\"","x":[1E5,-0,0.1]}');
});

test('a file without such numbers is parsed as JSON.parse does; invalid JSON still throws', () => {
  const text = '{"env":{"K":"v"},"n":[1,2,3],"t":true,"f":null}';
  assert.deepEqual(parseKeepingNumbers(text).json, JSON.parse(text));
  assert.equal(roundTrip(text), text);
  assert.throws(() => parseKeepingNumbers('{"a": 01}'));
  assert.throws(() => parseKeepingNumbers('{"a": "unterminated}'));
});
