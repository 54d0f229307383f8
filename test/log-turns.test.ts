// The hub's log lines of one event-loop turn are one write per stream (a write to a pipe is a
// syscall); an error line and an exit write what is pending at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { LOG_TURN_MAX_CHARS } from '../src/log.js';

const FIXTURE = resolve(import.meta.dirname, 'fixtures/log-turns.ts');

function runFixture(mode: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', FIXTURE, mode], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return r;
}

test('the lines of one turn are one write; an error line is written at once, after the lines before it', () => {
  const r = runFixture('turn');
  const report = JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('REPORT ') + 7));
  assert.equal(report.inTurn, 0, 'nothing written during the turn');
  assert.equal(report.afterTurn, 1, 'one write for the 50 lines');
  const first = report.writes[0];
  assert.equal(first.stream, 'out');
  const lines = first.text.trimEnd().split('\n').map((l: string) => JSON.parse(l));
  assert.deepEqual(lines.map((l: any) => l.i), Array.from({ length: 50 }, (_, i) => i), 'every line, in order');
  assert.ok(lines.every((l: any) => l.msg === 'line' && l.level === 'info' && l.node === 'fixture'));
  // The error: the pending info line first (stdout), then the warning and the error in one write (stderr).
  assert.equal(report.atError, 3);
  assert.deepEqual(report.writes.slice(1).map((w: any) => [w.stream, w.text.trimEnd().split('\n').map((l: string) => JSON.parse(l).msg)]), [
    ['out', ['before the error']],
    ['err', ['a warning', 'an error']],
  ]);
  assert.ok(!r.stdout.includes('below the level'));
});

test('lines pending when the process exits are written', () => {
  const r = runFixture('exit');
  const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => l.i), Array.from({ length: 50 }, (_, i) => i));
});

test('a turn that logs a lot is written as it passes LOG_TURN_MAX_CHARS, not held whole', () => {
  const r = runFixture('big');
  const report = JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('REPORT ') + 7));
  assert.ok(report.inTurn >= 4, `written during the turn: ${report.inTurn} writes`);
  assert.ok(report.lens.every((n: number) => n <= LOG_TURN_MAX_CHARS + 400), `each write at most the bound and one line: ${report.lens}`);
  const lines = r.stdout.slice(0, r.stdout.lastIndexOf('\nREPORT ')).trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => l.i), Array.from({ length: 1000 }, (_, i) => i), 'every line once, in order');
});
