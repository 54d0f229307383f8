// Schemas are compiled once, when a route is declared, never per request.
import Type, { type TSchema, type Static, type TUnsafe } from 'typebox';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { fail } from '../errors.js';

export interface Checker<T> {
  schema: TSchema;
  /** Validate (and for queries, coerce strings and apply defaults); throws a 400 HubError. */
  parse(input: unknown, where: string): T;
  /**
   * Set on query checkers whose parsed values may be shared: the request wrapper remembers them
   * here by the raw query string, so a repeated query is not split, decoded and checked again.
   * What is kept is frozen (deepFreeze): a handler that wrote to it would throw, not leak.
   */
  byRaw?: Map<string, T>;
}

/** Freezes a parsed value and what it holds: a value shared between requests is then read-only by check, not by promise. */
export function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

function firstError(errors: Iterable<{ instancePath: string; message: string; params?: any; keyword: string }>): string {
  for (const e of errors) {
    if (e.keyword === 'boolean') continue; // the additionalProperties echo of the real error
    let path = e.instancePath || '';
    if (e.keyword === 'additionalProperties' && e.params?.additionalProperties) {
      return `${path || '/'}: unknown field ${JSON.stringify(e.params.additionalProperties[0])}`;
    }
    if (e.keyword === 'required' && e.params?.requiredProperties) {
      return `${path || '/'}: missing field ${JSON.stringify(e.params.requiredProperties[0])}`;
    }
    return `${path || '/'}: ${e.message}`;
  }
  return 'invalid value';
}

export function compileBody<S extends TSchema>(schema: S): Checker<Static<S>> {
  const c = Compile(schema);
  return {
    schema,
    parse(input, where) {
      if (!c.Check(input)) throw fail('VALIDATION', `${where}${firstError(c.Errors(input) as any)}`);
      return input as Static<S>;
    },
  };
}

/** Query strings and path params arrive as strings: convert, default, then check. */
export function compileQuery<S extends TSchema>(schema: S): Checker<Static<S>> {
  const c = Compile(schema);
  return {
    schema,
    parse(input, where) {
      const converted = Value.Default(schema, Value.Convert(schema, input));
      if (!c.Check(converted)) throw fail('VALIDATION', `${where}${firstError(c.Errors(converted) as any)}`);
      return converted as Static<S>;
    },
  };
}

/** A union of string literals, typed as the union of its literals (a mapped array would be typed `never`); at run time the plain anyOf. */
export const literals = <T extends string>(xs: readonly T[]): TUnsafe<T> => Type.Union(xs.map((x) => Type.Literal(x))) as unknown as TUnsafe<T>;
