// host-cli/bounds.ts on its own: every run frame an engine's output can make comes out as frames
// the hub's decoder and schemas accept (encodeHostFrame judges as the hub does), cut where a bound
// says and marked, whole where it fits. Each case is one bound; the runner tests drive them through
// a fake engine, where a bound left out fails the run instead of the frame (ENGINE_FAILED).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundRunFrame, boundPayload, ERROR_CODE_MAX_CHARS } from '../src/host-cli/bounds.js';
import { encodeHostFrame } from '../host-protocol/codec.js';
import type { Block, HostToHub } from '../host-protocol/frames.js';
import { ARRAY_MAX_ITEMS, ERROR_MAX_CHARS, FRAME_MAX_BYTES, NAME_MAX_CHARS } from '../host-protocol/limits.js';

type Msg = HostToHub & { t: 'run.message' };

/** The frames `f` becomes, each one judged as the hub judges it. */
function bounded(f: HostToHub): HostToHub[] {
  const out = boundRunFrame(f);
  for (const o of out) assert.equal(encodeHostFrame(o).error, undefined, `${o.t} refused`);
  return out;
}
const toolUse = (b: Partial<Block>): HostToHub => ({ t: 'run.message', runId: 'run_1', role: 'assistant', blocks: [{ kind: 'tool_use', toolId: 'toolu_1', toolName: 'Bash', ...b } as Block] });
const block = (f: HostToHub[]) => (f[0] as Msg).blocks[0];

test('names: a tool name and id, a model and an engine session id are cut to NAME_MAX_CHARS, never inside a surrogate pair', () => {
  const long = 'n'.repeat(NAME_MAX_CHARS + 100);
  const b = block(bounded(toolUse({ toolName: long, toolId: long })));
  assert.deepEqual([b.toolName!.length, b.toolId!.length], [NAME_MAX_CHARS, NAME_MAX_CHARS]);
  // A pair across the cut: the whole pair goes, not its first half.
  const split = 'a'.repeat(NAME_MAX_CHARS - 1) + '😀' + 'z';
  assert.equal(block(bounded(toolUse({ toolName: split }))).toolName, 'a'.repeat(NAME_MAX_CHARS - 1));
  for (const t of ['run.init', 'run.end'] as const) {
    const [f] = bounded({ t, runId: 'run_1', model: long, engineSessionId: long, ...(t === 'run.end' ? { ok: true } : {}) } as HostToHub);
    assert.deepEqual([(f as { model: string }).model.length, (f as { engineSessionId: string }).engineSessionId.length], [NAME_MAX_CHARS, NAME_MAX_CHARS], t);
  }
});

test('a run.end error\'s code and message are cut to what the hub keeps', () => {
  const [f] = bounded({ t: 'run.end', runId: 'run_1', ok: false, error: { code: 'E'.repeat(100), message: 'm'.repeat(ERROR_MAX_CHARS * 3) } });
  const e = (f as HostToHub & { t: 'run.end' }).error!;
  assert.deepEqual([e.code.length, e.message.length], [ERROR_CODE_MAX_CHARS, ERROR_MAX_CHARS]);
});

test('tool payloads: too many items, or a key past the string bound, become their JSON text; a small one stays as it is', () => {
  const wide = Array.from({ length: ARRAY_MAX_ITEMS + 1 }, (_, i) => i);
  const asText = block(bounded(toolUse({ toolInput: { items: wide } }))).toolInput;
  assert.equal(typeof asText, 'string');
  assert.equal(JSON.parse(asText as string).items.length, ARRAY_MAX_ITEMS + 1, 'whole: only its shape changed');
  const bigKey = boundPayload({ ['k'.repeat(1_100_000)]: 1 });
  assert.equal(typeof bigKey, 'string');
  assert.match(bigKey as string, /truncated by agent-host/);
  assert.deepEqual(boundPayload({ command: 'ls -la', n: [1, 2] }), { command: 'ls -la', n: [1, 2] });
});

test('a tool result\'s isError is a boolean whatever the engine printed', () => {
  const f = bounded({ t: 'run.message', runId: 'run_1', role: 'user', blocks: [{ kind: 'tool_result', toolId: 'toolu_1', toolResult: { content: 'ok', isError: 'yes' as unknown as boolean } }] });
  assert.equal(block(f).toolResult!.isError, false);
});

test('a message of few blocks but more bytes than a frame holds is split, every block kept in order', () => {
  const blocks: Block[] = Array.from({ length: 8 }, (_, i) => ({ kind: 'text', content: String(i).repeat(900_000) }));
  const out = bounded({ t: 'run.message', runId: 'run_1', role: 'assistant', blocks }) as Msg[];
  assert.ok(out.length > 1, `${out.length} message(s) for ${8 * 900_000} bytes (a frame holds ${FRAME_MAX_BYTES})`);
  assert.deepEqual(out.flatMap((m) => m.blocks.map((b) => b.content![0])), ['0', '1', '2', '3', '4', '5', '6', '7']);
});
