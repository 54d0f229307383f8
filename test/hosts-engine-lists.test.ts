// The engine lists hosts report (src/hosts/engine-lists.ts): equal lists share one array, bounded in
// bytes and in number; after the hello a report equal to the channel's last list is dropped, and a host
// reports at most ENGINE_REPORTS_PER_MINUTE lists a minute (each one a presence write and a row write).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineLists, ENGINE_LISTS_MAX, ENGINE_REPORTS_PER_MINUTE } from '../src/hosts/engine-lists.js';
import { INTERNED_LIST_MAX_CHARS } from '../src/hosts/presence.js';

const list = (name: string) => [{ id: 'claude-code', displayName: name }];

test('equal lists share one array; a list too large to share is not kept', () => {
  const l = new EngineLists();
  const a = l.intern(list('Claude Code'));
  assert.equal(l.intern(list('Claude Code')), a, 'the same array');
  const big = 'x'.repeat(INTERNED_LIST_MAX_CHARS);
  const first = list(big);
  assert.equal(l.intern(first), first);
  const second = list(big);
  assert.equal(l.intern(second), second, 'not the first copy: a list past the bound is not kept');
});

test('the shared lists are bounded in number: past the bound they are forgotten', () => {
  const l = new EngineLists();
  const first = l.intern(list('first'));
  for (let i = 0; i <= ENGINE_LISTS_MAX; i++) l.intern(list(`distinct ${i}`));
  assert.notEqual(l.intern(list('first')), first);
});

test('a report equal to the channel\'s last list is dropped; past the per-minute budget the rest are, for that host only', () => {
  const l = new EngineLists();
  const last = l.intern(list('Claude Code'));
  assert.equal(l.report('hst_a', list('Claude Code'), last), undefined, 'unchanged');
  for (let i = 0; i < ENGINE_REPORTS_PER_MINUTE; i++) assert.ok(l.report('hst_a', list(`v${i}`), last), `report ${i} within the budget`);
  assert.equal(l.report('hst_a', list('one more'), last), undefined, 'past the budget');
  assert.deepEqual(l.report('hst_b', list('one more'), undefined), list('one more'), 'another host has its own budget');
});
