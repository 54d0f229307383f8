// One line of JSON per event. Callers pass facts, never secrets: there is no
// field here that would print a header or a key.
export type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<string, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line at `level` would be written (a hot path skips building its fields when not); unset: assume it would. */
  enabled?(level: Level): boolean;
}

/**
 * The lines of one event-loop turn, written to their stream at once. Writes to a pipe or a file
 * are synchronous: at `info` a busy hub logs a line per run start, run end and host connect, and
 * one write per line was one syscall each. An error line is written at once, after every line
 * before it (it may be the last before a crash); an exit writes what is left.
 */
/** Characters of lines held for one stream before they are written without waiting for the turn's end. */
export const LOG_TURN_MAX_CHARS = 64 * 1024;

class TurnLines {
  private lines: string[] = [];
  private chars = 0;
  private scheduled = false;
  constructor(private readonly out: NodeJS.WritableStream) {}

  push(line: string): void {
    this.lines.push(line);
    // A turn that logs a lot (a mass disconnect) is written as it goes, not held whole.
    if ((this.chars += line.length + 1) >= LOG_TURN_MAX_CHARS) return this.flush();
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  readonly flush = (): void => {
    this.scheduled = false;
    if (!this.lines.length) return;
    const text = this.lines.length === 1 ? this.lines[0] + '\n' : this.lines.join('\n') + '\n';
    this.lines = [];
    this.chars = 0;
    this.out.write(text);
  };
}

let streams: { out: TurnLines; err: TurnLines } | undefined;
function stdStreams(): { out: TurnLines; err: TurnLines } {
  if (!streams) {
    const s = (streams = { out: new TurnLines(process.stdout), err: new TurnLines(process.stderr) });
    process.on('exit', () => {
      s.out.flush();
      s.err.flush();
    });
  }
  return streams;
}

/** `sink`: where lines go instead of stdout/stderr (tests read every line the hub writes). */
export function createLogger(level: string, base: Record<string, unknown> = {}, sink?: (line: string, level: Level) => void): Logger {
  const min = order[level] ?? 20;
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const line = JSON.stringify({ t: new Date().toISOString(), level: lvl, msg, ...base, ...fields }, (_k, v) => (v instanceof Error ? errorFields(v) : v));
    if (sink) return sink(line, lvl);
    const { out, err } = stdStreams();
    (lvl === 'error' || lvl === 'warn' ? err : out).push(line);
    if (lvl === 'error') {
      out.flush();
      err.flush();
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    enabled: (lvl) => order[lvl] >= min,
  };
}

/** Where a statement failed, the driver's own message, before the statement (with its values) was put in front of it. */
export const DRIVER_MESSAGE = Symbol.for('agent-hub.driver-message');

/**
 * Keeps a failed statement's driver message on its error. knex (with `compileSqlOnError: false`) makes the
 * message `<statement> - <driver's message>`, and MikroORM writes the values into the statement.
 */
export function keepDriverMessage(e: unknown, statement: unknown): void {
  if (!(e instanceof Error) || typeof statement !== 'string') return;
  const head = statement + ' - ';
  (e as { [DRIVER_MESSAGE]?: string })[DRIVER_MESSAGE] = e.message.startsWith(head) ? e.message.slice(head.length) : '(the database driver failed a statement)';
}

/**
 * A PostgreSQL error's SQLSTATE: five digits or capitals, at least one a digit (every class and
 * subclass has one: 22P02, XX000, HV00B); Node's own codes have none (EPIPE, ECONNREFUSED).
 */
const SQLSTATE = /^(?=.*[0-9])[0-9A-Z]{5}$/;
/** Characters of PostgreSQL's own message kept in a line. */
const DB_MESSAGE_MAX_CHARS = 1000;
/** A database error's fields that name where it happened, never a value. */
const DB_ERROR_FIELDS = ['severity', 'table', 'column', 'constraint', 'dataType', 'routine'] as const;

/**
 * What a line says of an error. A database error (a SQLSTATE `code`, node-postgres's or MikroORM's
 * exception) keeps its code, where it happened and PostgreSQL's own message, but not the statement:
 * MikroORM writes a statement's values into its text and knex puts that text, then " - ", before the
 * message of every error it passes on, so a failed write would log the prompt, address or hash it
 * carried (the stack repeats the message: only its frames are kept; `detail` quotes values: left out,
 * also where MikroORM appends it to the message; so does the message when a value could not be read:
 * that value is replaced).
 */
export function errorFields(e: Error): Record<string, unknown> {
  const code = (e as { code?: unknown }).code;
  const driver = (e as { [DRIVER_MESSAGE]?: unknown })[DRIVER_MESSAGE];
  const sqlstate = typeof code === 'string' && SQLSTATE.test(code);
  // A statement that failed without a SQLSTATE (its connection lost mid-statement) carries its values too.
  if (!sqlstate && typeof driver !== 'string') return { name: e.name, message: e.message, stack: e.stack };
  // The driver's own message as kept where the statement failed (db/orm.ts); else read out of the text:
  // MikroORM appends PostgreSQL's detail and hint ("\n - detail: Key (id)=(…) already exists."), which quote values.
  const text = typeof driver === 'string' ? driver : e.message.replace(/\n - (?:detail|hint): [\s\S]*$/, '');
  const at = typeof driver === 'string' ? -1 : text.lastIndexOf(' - ');
  // PostgreSQL quotes a value it could not read after a colon (invalid input syntax for type integer: "…"):
  // from there on it goes (one linear pass, whatever the value holds); the names it quotes elsewhere
  // (column "x", constraint "y") stay. What is left is bounded like any line's field.
  const own = (at >= 0 ? text.slice(at + 3) : text).replace(/: "[\s\S]*$/, ': "[value]"').slice(0, DB_MESSAGE_MAX_CHARS);
  const out: Record<string, unknown> = { name: e.name, ...(sqlstate && { code }), message: scrubSecrets(own) };
  for (const k of DB_ERROR_FIELDS) {
    const v = (e as unknown as Record<string, unknown>)[k];
    if (typeof v === 'string' && v) out[k] = v;
  }
  out.stack = (e.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)).join('\n');
  return out;
}

// Anything that looks like a credential: our own prefixed secrets, `sk-` keys, bearer tokens, and
// long runs of token characters holding both letters and digits (JWTs, opaque keys).
const SECRETISH = /\b(?:ah[khrp]_|sk-)[A-Za-z0-9_\-]{6,}|\bbearer\s+\S+|[A-Za-z0-9_\-.]{24,}/gi;

/**
 * Text from outside (an engine's stderr relayed by a host) with whatever looks like a credential
 * replaced, before it goes into a line: an engine answering 401 may echo the key it was given.
 */
export function scrubSecrets(text: string): string {
  return text.replace(SECRETISH, (m) => (/^(?:ah[khrp]_|sk-|bearer\s)/i.test(m) || (/[0-9]/.test(m) && /[A-Za-z]/.test(m)) ? '[redacted]' : m));
}
