// The host's directory listing (src/host-cli/dirs.ts) on its own: what a path the hub sends may name.
// hosts-e2e lists through a real agent-host; here each refusal is judged by the rule that makes it
// (audit by mutation, fifty-second session: an absolute path was read as a relative one once its own
// check was removed, and nothing failed).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listDirs, relativeSegments, DirsError } from '../src/host-cli/dirs.js';
import { ReplyCodes } from '../host-protocol/frames.js';

const tmp = mkdtempSync(join(tmpdir(), 'dirs-'));
const root = join(tmp, 'root');
mkdirSync(join(root, 'etc', 'inner'), { recursive: true });
mkdirSync(join(tmp, 'outside'));
symlinkSync(join(tmp, 'outside'), join(root, 'out'));
symlinkSync(join(root, 'etc'), join(root, 'alias'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const invalid = (e: unknown) => e instanceof DirsError && e.code === ReplyCodes.INVALID;

test('a path is relative to the work root: absolute, drive-letter, NUL and ".." forms are refused as such', async () => {
  for (const p of ['/etc', '\\etc', 'C:/x', 'c:x', 'etc\0', 'etc/../etc', '..', 'etc\\..\\etc']) {
    assert.throws(() => relativeSegments(p), invalid, JSON.stringify(p));
    await assert.rejects(listDirs(root, p), invalid, JSON.stringify(p));
  }
  assert.deepEqual(relativeSegments('./etc//inner/'), ['etc', 'inner']);
  assert.deepEqual(relativeSegments(''), []);
});

test('listings stay inside the work root: a symlink out is neither listed nor followed; one inside is', async () => {
  assert.deepEqual((await listDirs(root, '')).entries.map((e) => e.name), ['alias', 'etc']);
  await assert.rejects(listDirs(root, 'out'), invalid);
  assert.deepEqual(await listDirs(root, 'alias'), { path: 'alias', entries: [{ name: 'inner', path: 'alias/inner' }] });
  await assert.rejects(listDirs(root, 'missing'), (e: unknown) => e instanceof DirsError && e.code === ReplyCodes.NOT_FOUND);
});
