// Faults injected into the hub's database calls, in the real database: each
// SQL call the hub makes through its EntityManager (execute; knex's raw in a
// transaction; node-postgres on a pooled connection outside one, the message
// path's: src/db/direct.ts) is shown to `decide` first, which may answer for
// it; so is each call through the shared raw-SQL one (ctx.rawEm). Returns the
// function that removes the injection.
import type { HubContext } from '../../src/context.js';

/** `run()` makes the real call; a returned promise answers instead of it (undefined: the call goes through). */
export type DbFault = (sql: string, run: () => Promise<unknown>) => Promise<unknown> | undefined;

export function injectDbFaults(ctx: HubContext, decide: DbFault): () => void {
  const orig = ctx.em;
  const origRaw = ctx.rawEm;
  // The shared raw-SQL EntityManager is left as it is: while injected, its callers get a faulty fork each time.
  ctx.rawEm = () => ctx.em();
  // knex's raw returns a query builder, awaited and sometimes given a transaction: an answer must allow both.
  const asQuery = (p: Promise<unknown>) => Object.assign(p, { transacting() {} });
  ctx.em = () => {
    const em = orig();
    const getConnection = em.getConnection.bind(em);
    (em as any).getConnection = (...a: any[]) => {
      const conn = (getConnection as any)(...a);
      return new Proxy(conn, {
        get(target, p) {
          const v = Reflect.get(target, p, target);
          if (p === 'getKnex') {
            const knex = v.call(target);
            return () => new Proxy(knex, {
              get(k, kp) {
                const kv = Reflect.get(k, kp, k);
                if (kp === 'client') return pooledClient(kv, decide);
                if (kp !== 'raw') return typeof kv === 'function' ? kv.bind(k) : kv;
                return (sql: string, ...rest: unknown[]) => {
                  const answer = decide(String(sql), () => Promise.resolve(kv.call(k, sql, ...rest)));
                  return answer ? asQuery(answer) : kv.call(k, sql, ...rest);
                };
              },
            });
          }
          if (p !== 'execute') return typeof v === 'function' ? v.bind(target) : v;
          return (sql: string, ...rest: unknown[]) => decide(String(sql), () => v.call(target, sql, ...rest)) ?? v.call(target, sql, ...rest);
        },
      });
    };
    return em;
  };
  return () => {
    ctx.em = orig;
    ctx.rawEm = origRaw;
  };
}

/** knex's client, whose pooled connections show each query to `decide` (and go back to the pool as themselves). */
function pooledClient(client: any, decide: DbFault): unknown {
  const real = new WeakMap<object, object>();
  return new Proxy(client, {
    get(c, p) {
      const v = Reflect.get(c, p, c);
      if (p === 'acquireConnection') {
        return async () => {
          const conn = await v.call(c);
          const wrapped = new Proxy(conn, {
            get(t, q) {
              const f = Reflect.get(t, q, t);
              if (q !== 'query') return typeof f === 'function' ? f.bind(t) : f;
              return (text: string, values: unknown[]) => decide(String(text), () => f.call(t, text, values)) ?? f.call(t, text, values);
            },
          });
          real.set(wrapped, conn);
          return wrapped;
        };
      }
      if (p === 'releaseConnection') return (conn: object) => v.call(c, real.get(conn) ?? conn);
      return typeof v === 'function' ? v.bind(c) : v;
    },
  });
}
