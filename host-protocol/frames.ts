// Every frame of the hub ↔ host channel: one discriminated union per
// direction on the `t` field. `id` pairs a reply with its request; frames
// without `id` need no answer.
import Type, { type Static } from 'typebox';
import { BLOCKS_MAX, ERROR_MAX_CHARS, NAME_MAX_CHARS } from './limits.js';

const Str = (max = 10_000) => Type.String({ maxLength: max });
const Id = Type.String({ minLength: 1, maxLength: 128 });
const ReqId = Type.Integer({ minimum: 1 });

// Closed: an engine's extra fields were kept (per distinct list in memory, in presence and in the
// hosts row) and served back, megabytes of them from one host.
export const Engine = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 80, pattern: '^[A-Za-z0-9._-]+$' }),
  displayName: Str(120),
  version: Type.Optional(Str(120)),
}, { additionalProperties: false });
export type Engine = Static<typeof Engine>;

/** One normalized content block of an engine message (see SPEC: Message object). */
export const Block = Type.Object({
  kind: Type.Union([Type.Literal('text'), Type.Literal('thinking'), Type.Literal('tool_use'), Type.Literal('tool_result')]),
  content: Type.Optional(Type.String()),
  toolName: Type.Optional(Str(NAME_MAX_CHARS)),
  toolId: Type.Optional(Str(NAME_MAX_CHARS)),
  toolInput: Type.Optional(Type.Unknown()),
  toolResult: Type.Optional(Type.Object({ content: Type.Unknown(), isError: Type.Boolean() })),
});
export type Block = Static<typeof Block>;

/**
 * Most tokens of one kind a run may report: far past any real turn (a long agentic turn reads tens
 * of millions), and small enough that a run's cost (input + output × 2) stays an exact integer in
 * JavaScript and in a bigint column. The usage is the host's word and charges the runner.
 */
export const MAX_RUN_TOKENS = 1_000_000_000;
const Tokens = Type.Integer({ minimum: 0, maximum: MAX_RUN_TOKENS });
export const Usage = Type.Object({ inputTokens: Tokens, outputTokens: Tokens });
export type Usage = Static<typeof Usage>;

// ---------- host → hub ----------
export const Hello = Type.Object({
  t: Type.Literal('hello'),
  v: Type.Integer(),
  cli: Str(40),
  name: Str(120),
  capacity: Type.Integer({ minimum: 1, maximum: 1000 }),
  engines: Type.Array(Engine, { maxItems: 50 }),
  /** runIds the host is still running (after a reconnect). */
  running: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
});

/** Engine session started: its own session id (for --resume) and the actual model. */
export const RunInit = Type.Object({ t: Type.Literal('run.init'), runId: Id, engineSessionId: Type.Optional(Str(NAME_MAX_CHARS)), model: Type.Optional(Str(NAME_MAX_CHARS)) });
/** Incremental assistant text (partial messages). */
export const RunDelta = Type.Object({ t: Type.Literal('run.delta'), runId: Id, text: Type.String() });
/** A complete engine message, already normalized into blocks. */
export const RunMessage = Type.Object({
  t: Type.Literal('run.message'),
  runId: Id,
  role: Type.Union([Type.Literal('assistant'), Type.Literal('user')]),
  blocks: Type.Array(Block, { maxItems: BLOCKS_MAX }),
});
/** The turn ended (success, failure, or aborted). Sent exactly once per run. */
export const RunEnd = Type.Object({
  t: Type.Literal('run.end'),
  runId: Id,
  ok: Type.Boolean(),
  aborted: Type.Optional(Type.Boolean()),
  usage: Type.Optional(Usage),
  engineSessionId: Type.Optional(Str(NAME_MAX_CHARS)),
  model: Type.Optional(Str(NAME_MAX_CHARS)),
  error: Type.Optional(Type.Object({ code: Str(40), message: Str(ERROR_MAX_CHARS) })),
});
/** Answer to a request frame carrying `id`. */
export const Reply = Type.Object({
  t: Type.Literal('reply'),
  id: ReqId,
  ok: Type.Boolean(),
  data: Type.Optional(Type.Unknown()),
  error: Type.Optional(Str(4000)),
  /** Why ok is false: one of ReplyCodes (added in v1; absent means `failed`). */
  code: Type.Optional(Str(40)),
});

/** Machine-readable reasons a host gives for `ok: false`. */
export const ReplyCodes = {
  /** The host does not know this request (an older CLI). */
  UNSUPPORTED: 'unsupported',
  /** The target does not exist (e.g. a directory). */
  NOT_FOUND: 'not_found',
  /** The request is not acceptable (e.g. a path escaping the work root). */
  INVALID: 'invalid',
  /** Anything else. */
  FAILED: 'failed',
} as const;
export const Ping = Type.Object({ t: Type.Literal('ping'), id: ReqId, ts: Type.Optional(Type.Number()) });
export const Pong = Type.Object({ t: Type.Literal('pong'), id: ReqId, ts: Type.Optional(Type.Number()) });
/** Engines changed (after a refresh or on the host's own initiative). */
export const EnginesFrame = Type.Object({ t: Type.Literal('engines'), engines: Type.Array(Engine, { maxItems: 50 }) });

export const HostToHub = Type.Union([Hello, RunInit, RunDelta, RunMessage, RunEnd, Reply, Ping, Pong, EnginesFrame]);
export type HostToHub = Static<typeof HostToHub>;

// ---------- hub → host ----------
export const Welcome = Type.Object({
  t: Type.Literal('welcome'),
  hostId: Id,
  heartbeatMs: Type.Integer({ minimum: 1000 }),
  /** The hub's PROTOCOL_VERSION: a host sends frames newer than this only to a hub that knows them. */
  v: Type.Optional(Type.Integer()),
});
export const RunStart = Type.Object({
  t: Type.Literal('run.start'),
  runId: Id,
  sessionId: Id,
  engine: Str(80),
  prompt: Type.String({ maxLength: 400_000 }),
  /** Relative to the host's work root; the host confines it. */
  workDir: Str(500),
  /** The engine's own session id from an earlier turn, to continue it. */
  resume: Type.Optional(Str(200)),
  /** default | accept-edits | auto | plan */
  mode: Str(40),
  effort: Type.Optional(Str(40)),
  /** The run is a user's other than the agent's owner: the host gives it none of the owner's own engine settings (added in v1, optional; an older host ignores it). */
  guest: Type.Optional(Type.Boolean()),
});
/**
 * Ends a run early. With `id` (added in v1, optional) it is a request: the host answers `reply {id, ok: true}`
 * once the engine process is gone (at once when it does not run that run); an older host ignores `id`.
 */
export const RunAbort = Type.Object({ t: Type.Literal('run.abort'), runId: Id, id: Type.Optional(ReqId) });
/** Model settings for one engine; `config: null` reverts to the engine's default. */
export const SettingsApply = Type.Object({
  t: Type.Literal('settings.apply'),
  id: ReqId,
  engine: Str(80),
  config: Type.Union([
    Type.Null(),
    Type.Object({ baseUrl: Str(2000), authMode: Type.Union([Type.Literal('bearer'), Type.Literal('x-api-key')]), apiKey: Str(4000), model: Str(200) }),
  ]),
});
export const DirsList = Type.Object({ t: Type.Literal('dirs.list'), id: ReqId, path: Str(500) });
export const EnginesRefresh = Type.Object({ t: Type.Literal('engines.refresh'), id: ReqId });

/**
 * The connectivity test of a model endpoint, run on the host (added in v1, request): the host probes
 * from where its engine will call the endpoint and answers `reply {id, ok: true, data: ModelTestResult}`.
 * Sent only to the owner's own host; `apiKey` is the decrypted key, never logged on either side.
 */
export const ModelTest = Type.Object({
  t: Type.Literal('model.test'),
  id: ReqId,
  apiType: Type.Union([Type.Literal('anthropic'), Type.Literal('openai')]),
  baseUrl: Str(2000),
  apiKey: Str(4000),
  modelName: Str(200),
  /** The whole probe's deadline. */
  timeoutMs: Type.Integer({ minimum: 100, maximum: 600_000 }),
});

export const HubToHost = Type.Union([Welcome, RunStart, RunAbort, SettingsApply, DirsList, EnginesRefresh, Ping, Pong, ModelTest]);
export type HubToHost = Static<typeof HubToHost>;

// ---------- reply payloads (the `data` of a `reply`) ----------
/** Reply to `dirs.list`: the directories directly under `path` (relative to the work root, '' = the root). */
export const DirsResult = Type.Object({
  path: Str(500),
  entries: Type.Array(Type.Object({ name: Str(255), path: Str(1000) }), { maxItems: 5000 }),
  /** More directories exist than the listing carries (entry or byte bound reached; added in v1). */
  truncated: Type.Optional(Type.Boolean()),
});
export type DirsResult = Static<typeof DirsResult>;
/** Reply to `engines.refresh`: the engines found now. */
export const EnginesResult = Type.Object({ engines: Type.Array(Engine, { maxItems: 50 }) });
export type EnginesResult = Static<typeof EnginesResult>;

export type FrameOf<U, T extends string> = Extract<U, { t: T }>;

/** Reply to `model.test`: the answer of `POST /model-configs/test` (SPEC), as the host's probe found it. */
export const ModelTestResult = Type.Object({
  ok: Type.Boolean(),
  authMode: Type.Optional(Type.Union([Type.Literal('bearer'), Type.Literal('x-api-key')])),
  replyPreview: Type.Optional(Str(200)),
  latencyMs: Type.Number({ minimum: 0 }),
  error: Type.Optional(Str(4000)),
  reason: Type.Optional(
    Type.Union(['auth', 'model_not_found', 'quota', 'timeout', 'network', 'bad_response', 'path'].map((r) => Type.Literal(r))),
  ),
});
export type ModelTestResult = Static<typeof ModelTestResult>;
