// Pure rules of agents: publication state machine, substantive changes, visibility, workDir, ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canRead, checkWorkDir, idStem, inMarket, isListed, prefixStem, initialState, isSubstantive, nextState, unusableReason, type PubState } from '../src/agents/rules.js';

const now = new Date('2026-01-01T00:00:00Z');

test('initial states', () => {
  assert.deepEqual([initialState('public', 'submit', now).usageStatus, initialState('public', 'submit', now).reviewStatus], ['reviewing', 'pending']);
  assert.equal(initialState('public', undefined, now).usageStatus, 'offline');
  assert.equal(initialState('private', undefined, now).usageStatus, 'online');
  assert.equal(initialState('private', 'submit', now).reviewStatus, null);
  assert.equal(initialState('public', 'draft', now).usageStatus, 'draft');
  assert.ok([initialState('public', 'submit', now), initialState('private', 'draft', now)].every((s) => s.version === 1));
});

test('transitions on update', () => {
  const approved: PubState = { scope: 'public', usageStatus: 'online', reviewStatus: 'approved', rejectReason: null, version: 3, submittedAt: now };
  const submit = nextState(approved, 'public', 'submit', false, now);
  assert.deepEqual([submit.usageStatus, submit.reviewStatus, submit.version], ['reviewing', 'pending', 4]);
  const subst = nextState(approved, 'public', undefined, true, now);
  assert.deepEqual([subst.usageStatus, subst.reviewStatus, subst.version], ['reviewing', 'pending', 4]);
  assert.deepEqual(nextState(approved, 'public', undefined, false, now), approved);
  const priv = nextState(approved, 'private', undefined, true, now);
  assert.deepEqual([priv.usageStatus, priv.reviewStatus, priv.version], ['online', null, 3]);
  const rejected: PubState = { ...approved, usageStatus: 'offline', reviewStatus: 'rejected', rejectReason: 'no' };
  assert.equal(nextState(rejected, 'public', 'submit', false, now).rejectReason, null);
  assert.equal(nextState(approved, 'public', 'draft', false, now).usageStatus, 'draft');
  const privSubmit = nextState(priv, 'private', 'submit', false, now);
  assert.deepEqual([privSubmit.usageStatus, privSubmit.reviewStatus, privSubmit.version], ['online', null, 4]);
});

test('substantive fields', () => {
  const a = { name: 'a', displayName: 'A', description: '', tags: ['x'], category: 'other', pricing: 'free' as const, hostId: null, engine: null, workDir: '', expectedInput: '', expectedOutput: '' };
  assert.equal(isSubstantive(a, { ...a }), false);
  assert.equal(isSubstantive(a, { ...a, tags: ['x'] }), false);
  assert.equal(isSubstantive(a, { ...a, tags: ['y'] }), true);
  assert.equal(isSubstantive(a, { ...a, workDir: 'w' }), true);
});

test('workDir and ids', () => {
  for (const ok of ['', 'src', 'a/b/c', 'a..b', '.hidden']) assert.equal(checkWorkDir(ok), null, ok);
  for (const bad of ['/etc', '..', 'a/../b', 'a\\..\\b', '~/x', 'C:\\x', '\\\\server']) assert.notEqual(checkWorkDir(bad), null, bad);
  assert.equal(idStem(prefixStem('Zoë Li', 'usr_X'), 'My Agent!'), 'zoe-li/my-agent');
  assert.equal(idStem(prefixStem('张三', 'usr_AbCdEfGh12'), '助手'), 'u-cdefgh12/agent');
  assert.ok(idStem(prefixStem('x'.repeat(200), 'u'), 'y'.repeat(200)).length <= 100);
});

test('usability', () => {
  const base = { id: 'o/a', ownerId: 'o', scope: 'private' as const, reviewStatus: null, usageStatus: 'online' as const, enable: true, hostId: 'h', engine: 'e' };
  assert.equal(unusableReason(base, 'o'), null);
  assert.match(unusableReason({ ...base, enable: false }, 'o')!, /disabled/);
  assert.match(unusableReason({ ...base, hostId: null }, 'o')!, /host/);
  assert.match(unusableReason({ ...base, usageStatus: 'reviewing' }, 'member')!, /reviewing/);
});

test('visibility: listed only when public, approved, online and enabled; otherwise the owner and members see it, strangers do not', () => {
  const listed = { id: 'o/a', ownerId: 'o', scope: 'public' as const, reviewStatus: 'approved' as const, usageStatus: 'online' as const, enable: true };
  assert.equal(isListed(listed), true);
  const stranger = { userId: 's' };
  const member = { userId: 'm', shared: new Set(['o/a']) };
  for (const [why, a] of [
    ['disabled', { ...listed, enable: false }],
    ['private', { ...listed, scope: 'private' as const, reviewStatus: null }],
    ['under review', { ...listed, usageStatus: 'reviewing' as const, reviewStatus: 'pending' as const }],
    ['offline', { ...listed, usageStatus: 'offline' as const }],
    ['not approved', { ...listed, reviewStatus: 'rejected' as const }],
  ] as const) {
    assert.equal(isListed(a), false, why);
    assert.equal(inMarket(a, {}), false, `${why}: anonymous`);
    assert.equal(canRead(a, stranger), false, `${why}: a stranger`);
    assert.equal(canRead(a, { userId: 'o' }), true, `${why}: the owner`);
    assert.equal(canRead(a, member), true, `${why}: a member`);
  }
  // A draft is its owner's alone, shared or not.
  const draft = { ...listed, scope: 'private' as const, reviewStatus: null, usageStatus: 'draft' as const };
  assert.equal(canRead(draft, member), false);
  assert.equal(canRead(draft, { userId: 'o' }), true);
  assert.equal(inMarket(draft, { userId: 'o' }), false, 'not in the owner\'s market lists either');
});
