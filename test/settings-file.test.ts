// The host-side settings writer on real temporary files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile, stat, readdir, chmod, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applySettings, BACKUP_FILE, MANAGED_KEYS } from '../src/host-cli/settings.js';

const A = { baseUrl: 'https://proxy-a.example/api', authMode: 'bearer' as const, apiKey: 'sk-a-0123456789abcdef', model: 'model-a' };
const B = { baseUrl: 'https://proxy-b.example', authMode: 'x-api-key' as const, apiKey: 'sk-b-fedcba9876543210', model: 'model-b' };

async function dir(settings?: string, mode = 0o644) {
  const d = await mkdtemp(join(tmpdir(), 'claude-cfg-'));
  if (settings !== undefined) {
    await writeFile(join(d, 'settings.json'), settings);
    await chmod(join(d, 'settings.json'), mode);
  }
  return { d, file: join(d, 'settings.json'), opts: { claudeConfigDir: d } };
}
const read = async (f: string) => JSON.parse(await readFile(f, 'utf8'));
const modeOf = async (f: string) => (await stat(f)).mode & 0o777;

const ORIGINAL =
  JSON.stringify(
    {
      model: 'opus',
      permissions: { allow: ['Bash(ls:*)'], deny: [] },
      env: { FOO: 'bar', ANTHROPIC_API_KEY: 'users-own-key', ANTHROPIC_DEFAULT_OPUS_MODEL: 'claude-opus-4', DISABLE_TELEMETRY: '1' },
      hooks: { Stop: [] },
      statusLine: { type: 'command', command: 'echo hi' },
    },
    null,
    2,
  ) + '\n';

test('apply writes exactly the six keys, leaves every other key untouched, mode 0600', async () => {
  const { file, opts } = await dir(ORIGINAL);
  const before = JSON.parse(ORIGINAL);
  assert.deepEqual(await applySettings('claude-code', A, opts), { applied: true });
  const s = await read(file);
  assert.deepEqual(
    Object.fromEntries(MANAGED_KEYS.filter((k) => k in s.env).map((k) => [k, s.env[k]])),
    {
      ANTHROPIC_BASE_URL: A.baseUrl,
      ANTHROPIC_AUTH_TOKEN: A.apiKey,
      ANTHROPIC_DEFAULT_OPUS_MODEL: 'model-a',
      ANTHROPIC_DEFAULT_SONNET_MODEL: 'model-a',
      ANTHROPIC_DEFAULT_HAIKU_MODEL: 'model-a',
    },
    'bearer sets the auth token and removes the api key',
  );
  assert.equal(s.env.FOO, 'bar');
  assert.equal(s.env.DISABLE_TELEMETRY, '1');
  for (const k of ['model', 'permissions', 'hooks', 'statusLine']) assert.deepEqual(s[k], before[k], k);
  assert.deepEqual(Object.keys(s), Object.keys(before), 'top-level order kept');
  assert.equal(await modeOf(file), 0o600);
});

test('apply another: x-api-key swaps the auth variable; the backup is not overwritten', async () => {
  const { d, file, opts } = await dir(ORIGINAL);
  await applySettings('claude-code', A, opts);
  const backup1 = await readFile(join(d, BACKUP_FILE), 'utf8');
  assert.ok(!backup1.includes(A.apiKey), 'the backup holds the old values only');
  assert.equal(await modeOf(join(d, BACKUP_FILE)), 0o600);
  await applySettings('claude-code', B, opts);
  assert.equal(await readFile(join(d, BACKUP_FILE), 'utf8'), backup1, 'custom → custom keeps the backup');
  const s = await read(file);
  assert.equal(s.env.ANTHROPIC_API_KEY, B.apiKey);
  assert.ok(!('ANTHROPIC_AUTH_TOKEN' in s.env));
  assert.equal(s.env.ANTHROPIC_BASE_URL, B.baseUrl);
  assert.equal(s.env.ANTHROPIC_DEFAULT_HAIKU_MODEL, 'model-b');
  assert.equal(s.env.FOO, 'bar');
});

test('revert restores the file byte for byte (values, order, mode) and deletes the backup', async () => {
  for (const original of [
    ORIGINAL,
    // 4-space indent, no final newline, no managed keys at all
    JSON.stringify({ env: { A: '1' }, theme: 'dark' }, null, 4),
    // tabs, env absent
    JSON.stringify({ theme: 'light', nested: { x: [1, 2, { y: null }] } }, null, '\t') + '\n',
    // compact one-liner with an empty env
    JSON.stringify({ env: {} }),
  ]) {
    const { d, file, opts } = await dir(original, 0o640);
    await applySettings('claude-code', A, opts);
    await applySettings('claude-code', B, opts);
    await applySettings('claude-code', A, opts);
    assert.deepEqual(await applySettings('claude-code', null, opts), { applied: true, reverted: true });
    assert.equal(await readFile(file, 'utf8'), original);
    assert.equal(await modeOf(file), 0o640);
    assert.deepEqual(await readdir(d), ['settings.json'], 'backup and temp files gone');
  }
});

test('absent file: created with mode 0600 on apply, absent again after revert', async () => {
  const { d, file, opts } = await dir();
  await applySettings('claude-code', B, opts);
  const s = await read(file);
  assert.deepEqual(Object.keys(s), ['env']);
  assert.deepEqual(Object.keys(s.env).sort(), ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_DEFAULT_HAIKU_MODEL', 'ANTHROPIC_DEFAULT_OPUS_MODEL', 'ANTHROPIC_DEFAULT_SONNET_MODEL']);
  assert.equal(await modeOf(file), 0o600);
  await applySettings('claude-code', null, opts);
  assert.deepEqual(await readdir(d), []);
});

test('keys the user added while custom survive a revert', async () => {
  const { file, opts } = await dir(ORIGINAL);
  await applySettings('claude-code', A, opts);
  const s = await read(file);
  s.env.NEW_VAR = 'kept';
  s.theme = 'dark';
  await writeFile(file, JSON.stringify(s, null, 2) + '\n');
  await applySettings('claude-code', null, opts);
  const after = await read(file);
  assert.equal(after.env.NEW_VAR, 'kept');
  assert.equal(after.theme, 'dark');
  assert.equal(after.env.ANTHROPIC_API_KEY, 'users-own-key');
  assert.equal(after.env.ANTHROPIC_DEFAULT_OPUS_MODEL, 'claude-opus-4');
  assert.ok(!('ANTHROPIC_BASE_URL' in after.env) && !('ANTHROPIC_AUTH_TOKEN' in after.env));
});

test('revert without a backup changes nothing; unreadable files and other engines are refused', async () => {
  const { file, opts } = await dir(ORIGINAL);
  assert.deepEqual(await applySettings('claude-code', null, opts), { applied: false, reverted: true });
  assert.equal(await readFile(file, 'utf8'), ORIGINAL);
  await assert.rejects(applySettings('other-engine', A, opts), /no model settings/);
  const bad = await dir('{ "env": { oops');
  await assert.rejects(applySettings('claude-code', A, bad.opts), /not valid JSON/);
  assert.equal(await readFile(bad.file, 'utf8'), '{ "env": { oops', 'a file we cannot parse is left alone');
  assert.deepEqual(await readdir(bad.d), ['settings.json']);
});

test('a file whose shape is not Claude Code\'s, or a backup of an unknown format, is refused and left as it is', async () => {
  for (const text of ['[]', '"settings"', '{"env": []}', '{"env": "ANTHROPIC_BASE_URL=x"}']) {
    const f = await dir(text);
    await assert.rejects(applySettings('claude-code', A, f.opts), /JSON object|"env" is not an object/, text);
    assert.equal(await readFile(f.file, 'utf8'), text, `${text}: left alone`);
    assert.deepEqual(await readdir(f.d), ['settings.json'], `${text}: no backup, no temp file`);
  }
  const { d, file, opts } = await dir(ORIGINAL);
  await applySettings('claude-code', A, opts);
  const applied = await readFile(file, 'utf8');
  await writeFile(join(d, BACKUP_FILE), JSON.stringify({ v: 2, values: {}, positions: {} }));
  await assert.rejects(applySettings('claude-code', null, opts), /backup .* is unreadable: unknown backup format/);
  assert.equal(await readFile(file, 'utf8'), applied, 'nothing reverted from a backup it cannot read');
});

test('revert gives a file its wider mode back whatever the umask', async () => {
  const old = process.umask(0o077);
  try {
    const { file, opts } = await dir(ORIGINAL, 0o644);
    await applySettings('claude-code', A, opts);
    assert.equal(await modeOf(file), 0o600);
    await applySettings('claude-code', null, opts);
    assert.equal(await modeOf(file), 0o644);
  } finally {
    process.umask(old);
  }
});

test('a settings.json in a loop of symbolic links is refused, not followed for ever', { timeout: 20_000 }, async () => {
  const { d, file, opts } = await dir();
  await symlink('loop.json', file);
  await symlink('settings.json', join(d, 'loop.json'));
  await assert.rejects(applySettings('claude-code', A, opts), /ELOOP|too many levels/);
  assert.deepEqual((await readdir(d)).sort(), ['loop.json', 'settings.json']);
});

test('the owner\'s numbers come back as written: apply and revert change no other key\'s value, and revert gives the file back byte for byte', async () => {
  // Hand-written: an id too large for a double, a decimal past its precision, an exponent, a negative zero.
  const original = '{\n  "env": {\n    "FOO": "bar"\n  },\n  "orgId": 12345678901234567890,\n  "budget": 0.30000000000000000001,\n  "big": 1E5,\n  "z": -0,\n  "n": [\n    1,\n    -2.5,\n    "3 \\"4\\" 5"\n  ]\n}\n';
  const { file, opts } = await dir(original);
  await applySettings('claude-code', A, opts);
  const applied = await readFile(file, 'utf8');
  for (const lit of ['12345678901234567890', '0.30000000000000000001', '1E5', '-0']) assert.ok(applied.includes(lit), `${lit} kept: ${applied}`);
  assert.equal((await read(file)).env.ANTHROPIC_BASE_URL, A.baseUrl);
  await applySettings('claude-code', null, opts);
  assert.equal(await readFile(file, 'utf8'), original);
});
