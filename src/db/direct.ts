// Raw SQL with bind values on a pooled connection, run by node-postgres
// itself rather than knex's query runner (raw builder, bindings pass, runner,
// executioner, debug), which cost the hub about 40 µs of CPU per call when
// warm and several times that in a connect storm, whose few large calls per
// second never warm it up (perf, bench/hosts-cluster.ts). Same pool, same
// connections, same type parsing, same `?` placeholders (`\?` for a literal
// question mark) as knex's raw; errors are node-postgres's own, with their
// SQLSTATE `code`, and never carry the values.
interface PgConnection {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<unknown>;
}

/** `?` → `$1`, `$2`, …, as knex's PostgreSQL dialect numbers them; throws when the count is not the values'. */
export function positional(sql: string, count: number): string {
  let n = 0;
  const text = sql.replace(/(\\*)(\?)/g, (_m, escapes: string) => (escapes.length % 2 ? '?' : `$${++n}`));
  if (n !== count) throw new Error(`expected ${count} bindings, saw ${n}`);
  return text;
}

/** `knex`: MikroORM's knex instance (its `client` holds the pool). */
export async function direct<T>(knex: { client: unknown }, sql: string, params: unknown[]): Promise<T[]> {
  const text = positional(sql, params.length);
  const client = knex.client as unknown as PooledClient;
  const conn = await client.acquireConnection();
  try {
    return (await conn.query(text, params)).rows as T[];
  } finally {
    void client.releaseConnection(conn);
  }
}
