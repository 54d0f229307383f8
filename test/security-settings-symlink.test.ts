// Issue 10, hole 13: a symlinked settings.json (dotfiles setups) stays a
// symlink. Apply and revert write through to the link's target atomically (a
// temp file beside the target, then rename), never replacing the link by a
// plain file; revert restores the target byte for byte, mode included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, writeFile, chmod, lstat, stat, readlink, symlink, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applySettings, BACKUP_FILE } from '../src/host-cli/settings.js';

const A = { baseUrl: 'https://proxy-a.example/api', authMode: 'bearer' as const, apiKey: 'sk-a-0123456789abcdef', model: 'model-a' };
const B = { baseUrl: 'https://proxy-b.example', authMode: 'x-api-key' as const, apiKey: 'sk-b-fedcba9876543210', model: 'model-b' };
const ORIGINAL = JSON.stringify({ model: 'opus', env: { FOO: 'bar', ANTHROPIC_API_KEY: 'own' }, theme: 'dark' }, null, 4) + '\n';
const modeOf = async (f: string) => (await stat(f)).mode & 0o777;

async function setup(linkText: (dotfiles: string) => string) {
  const base = await mkdtemp(join(tmpdir(), 'settings-link-'));
  const dotfiles = join(base, 'dotfiles', 'claude');
  const config = join(base, 'claude-config');
  await mkdir(dotfiles, { recursive: true });
  await mkdir(config);
  const target = join(dotfiles, 'settings.json');
  const link = join(config, 'settings.json');
  await symlink(linkText(dotfiles), link);
  return { base, dotfiles, config, target, link, opts: { claudeConfigDir: config } };
}

for (const [label, linkText] of [
  ['absolute link', (d: string) => join(d, 'settings.json')],
  ['relative link', () => '../dotfiles/claude/settings.json'],
] as const) {
  test(`${label}: apply and revert write through to the target; the link stays a link; revert restores the target exactly`, async () => {
    const s = await setup(linkText);
    await writeFile(s.target, ORIGINAL);
    await chmod(s.target, 0o644);
    const linkBefore = await readlink(s.link);

    await applySettings('claude-code', A, s.opts);
    assert.ok((await lstat(s.link)).isSymbolicLink(), 'still a symlink after apply');
    assert.equal(await readlink(s.link), linkBefore, 'pointing where it pointed');
    const applied = JSON.parse(await readFile(s.target, 'utf8'));
    assert.equal(applied.env.ANTHROPIC_AUTH_TOKEN, A.apiKey, 'the target holds the new settings');
    assert.equal(applied.theme, 'dark');
    assert.equal(await modeOf(s.target), 0o600, 'the target holds a key now: no group or world access');

    await applySettings('claude-code', B, s.opts);
    assert.ok((await lstat(s.link)).isSymbolicLink());
    assert.equal(JSON.parse(await readFile(s.target, 'utf8')).env.ANTHROPIC_API_KEY, B.apiKey);

    assert.deepEqual(await applySettings('claude-code', null, s.opts), { applied: true, reverted: true });
    assert.ok((await lstat(s.link)).isSymbolicLink(), 'still a symlink after revert');
    assert.equal(await readlink(s.link), linkBefore);
    assert.equal(await readFile(s.target, 'utf8'), ORIGINAL, 'byte for byte');
    assert.equal(await modeOf(s.target), 0o644, "the target's own mode is back");
    assert.deepEqual((await readdir(s.dotfiles)).sort(), ['settings.json'], 'no temp file left beside the target');
    assert.deepEqual((await readdir(s.config)).sort(), ['settings.json'], 'backup gone, nothing left beside the link');
  });
}

test('a dangling link (target not yet created): apply creates the target, revert removes it and keeps the link', async () => {
  const s = await setup((d) => join(d, 'settings.json'));
  await applySettings('claude-code', A, s.opts);
  assert.ok((await lstat(s.link)).isSymbolicLink());
  assert.equal(JSON.parse(await readFile(s.target, 'utf8')).env.ANTHROPIC_BASE_URL, A.baseUrl);
  await applySettings('claude-code', null, s.opts);
  assert.ok((await lstat(s.link)).isSymbolicLink(), 'the link is the user\'s: it stays');
  await assert.rejects(stat(s.target), { code: 'ENOENT' });
  assert.deepEqual((await readdir(s.config)).sort(), ['settings.json']);
  assert.ok(!(await readdir(s.config)).includes(BACKUP_FILE));
});
