// What reaches the owner's settings.json from a model configuration (found by an audit): `baseUrl`
// was checked by parsing it, but the URL parser silently drops tabs and newlines anywhere and
// controls and spaces at either end, and the text as sent was what was stored and given to hosts;
// `modelName`'s pattern let every control that is not whitespace through (ESC, BEL, NEL, DEL). Both
// went verbatim into the env values of settings.json: what the connectivity test reached was not
// what the engine was given. Both are now refused with 400.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
let key: string;
before(async () => {
  t = await startTestHub({ rateLimitModelTestPerMinute: 0 } as any);
  key = (await t.user()).key;
});
after(async () => {
  await t.close();
});

const base = { name: 'cfg', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-values-0123456789', modelName: 'm1' };

test('a baseUrl holding a newline, a tab or surrounding controls is refused (400), not stored as sent', async () => {
  const bad = ['https://llm.example/v1\n', 'https://llm.exa\tmple/v1', '\u0001https://llm.example', 'https://llm.example/\r\nX-Injected: 1'];
  const accepted: string[] = [];
  for (const baseUrl of bad) {
    const r = await t.api('POST', '/api/v1/model-configs', { token: key, body: { ...base, baseUrl } });
    if (r.status !== 400) accepted.push(`${JSON.stringify(baseUrl)} → ${r.status} (stored ${JSON.stringify(r.body?.data?.baseUrl)})`);
  }
  assert.deepEqual(accepted, [], 'control characters in baseUrl reach the stored value and the hosts\' ANTHROPIC_BASE_URL');
});

test('a modelName holding control characters is refused (400)', async () => {
  const bad = ['m1\u001b[2J', 'm1\u0007', 'm1\u0085x', 'm1\u007f'];
  const accepted: string[] = [];
  for (const modelName of bad) {
    const r = await t.api('POST', '/api/v1/model-configs', { token: key, body: { ...base, modelName } });
    if (r.status !== 400) accepted.push(`${JSON.stringify(modelName)} → ${r.status}`);
  }
  assert.deepEqual(accepted, [], 'control characters in modelName reach the three ANTHROPIC_DEFAULT_*_MODEL values');
});

