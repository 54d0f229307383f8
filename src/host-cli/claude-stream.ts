// Claude Code stream-json → host-protocol run frames. Pure: one parsed JSON
// line in, zero or more frames out; the final `result` line is kept for
// run.end rather than turned into a frame.
import type { Block, HostToHub, Usage } from '../../host-protocol/frames.js';
import { MAX_RUN_TOKENS } from '../../host-protocol/frames.js';

export interface StreamResult {
  isError: boolean;
  subtype: string;
  message?: string;
  usage?: Usage;
  engineSessionId?: string;
}

/** Distinct assistant messages whose usage is kept apart; past it the oldest are folded into one sum. */
const USAGE_MESSAGES_MAX = 10_000;

export class ClaudeStream {
  engineSessionId?: string;
  model?: string;
  result?: StreamResult;
  /** Usage each assistant message reported, by message id (its lines repeat it, one line per content block). */
  private perMessage = new Map<string, { input: number; output: number }>();
  private folded = { input: 0, output: 0 };
  private anonymous = 0;

  constructor(private readonly runId: string) {}

  /**
   * What the turn used: the result line's total when the engine printed one, else the sum of what its
   * assistant messages reported so far — an engine stopped by an abort prints no result line, and a
   * turn aborted after its answer streamed would otherwise end with no usage at all (a free run).
   */
  usage(): Usage | undefined {
    if (this.result?.usage) return this.result.usage;
    if (!this.perMessage.size && !this.folded.input && !this.folded.output) return undefined;
    let input = this.folded.input;
    let output = this.folded.output;
    for (const u of this.perMessage.values()) {
      input += u.input;
      output += u.output;
    }
    return { inputTokens: Math.min(MAX_RUN_TOKENS, input), outputTokens: Math.min(MAX_RUN_TOKENS, output) };
  }

  private noteUsage(message: any): void {
    const u = usageOf(message?.usage);
    if (!u) return;
    const id = typeof message.id === 'string' && message.id ? message.id.slice(0, 200) : `#${++this.anonymous}`;
    const had = this.perMessage.get(id);
    // A message's lines repeat its usage; a later one may have counted more output.
    this.perMessage.set(id, { input: Math.max(had?.input ?? 0, u.inputTokens), output: Math.max(had?.output ?? 0, u.outputTokens) });
    if (this.perMessage.size > USAGE_MESSAGES_MAX) {
      const [oldest, v] = this.perMessage.entries().next().value as [string, { input: number; output: number }];
      this.perMessage.delete(oldest);
      this.folded.input += v.input;
      this.folded.output += v.output;
    }
  }

  /** Parses one stdout line; non-JSON lines are ignored (the engine may print notices). */
  line(raw: string): HostToHub[] {
    const s = raw.trim();
    if (!s.startsWith('{')) return [];
    let o: any;
    try {
      o = JSON.parse(s);
    } catch {
      return [];
    }
    return this.event(o);
  }

  event(o: any): HostToHub[] {
    const runId = this.runId;
    switch (o?.type) {
      case 'system':
        if (o.subtype !== 'init') return [];
        this.engineSessionId = str(o.session_id) ?? this.engineSessionId;
        this.model = str(o.model) ?? this.model;
        return [{ t: 'run.init', runId, engineSessionId: this.engineSessionId, model: this.model }];
      case 'stream_event': {
        const d = o.event?.type === 'content_block_delta' ? o.event.delta : undefined;
        if (d?.type === 'text_delta' && typeof d.text === 'string' && d.text) return [{ t: 'run.delta', runId, text: d.text }];
        return [];
      }
      case 'assistant':
      case 'user': {
        if (o.type === 'assistant' && typeof o.message?.model === 'string') this.model = o.message.model;
        if (o.type === 'assistant') this.noteUsage(o.message);
        const content = o.message?.content;
        if (!Array.isArray(content)) return [];
        const blocks = content.map(normalizeBlock).filter((b): b is Block => b !== undefined);
        return blocks.length ? [{ t: 'run.message', runId, role: o.type, blocks }] : [];
      }
      case 'result': {
        this.engineSessionId = str(o.session_id) ?? this.engineSessionId;
        this.result = {
          isError: o.is_error === true || (typeof o.subtype === 'string' && o.subtype !== 'success'),
          subtype: String(o.subtype ?? ''),
          message: typeof o.result === 'string' ? o.result.slice(0, 4000) : undefined,
          usage: usageOf(o.usage),
          engineSessionId: this.engineSessionId,
        };
        return [];
      }
      default:
        return [];
    }
  }
}

const str = (v: unknown) => (typeof v === 'string' && v ? v.slice(0, 200) : undefined);
const nat = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** Input counts every prompt token the engine processed, cached or not. */
export function usageOf(u: any): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  // Held to the protocol's bound: past it the hub would take the whole frame as bad and close the channel.
  return {
    inputTokens: Math.min(MAX_RUN_TOKENS, nat(u.input_tokens) + nat(u.cache_creation_input_tokens) + nat(u.cache_read_input_tokens)),
    outputTokens: Math.min(MAX_RUN_TOKENS, nat(u.output_tokens)),
  };
}

export function normalizeBlock(b: any): Block | undefined {
  switch (b?.type) {
    case 'text':
      return typeof b.text === 'string' ? { kind: 'text', content: b.text } : undefined;
    case 'thinking':
      return typeof b.thinking === 'string' ? { kind: 'thinking', content: b.thinking } : undefined;
    case 'tool_use':
      return { kind: 'tool_use', toolName: String(b.name ?? '').slice(0, 200), toolId: String(b.id ?? '').slice(0, 200), toolInput: b.input && typeof b.input === 'object' ? b.input : {} };
    case 'tool_result':
      return { kind: 'tool_result', toolId: String(b.tool_use_id ?? '').slice(0, 200), toolResult: { content: b.content ?? '', isError: b.is_error === true } };
    default:
      return undefined;
  }
}
