// The peer for the market read bench: Fastify 5 + node-postgres doing what a
// conventional service does for a signed-in read — look the API key's hash up,
// then read the row(s) — and answering the hub's envelope. Same database, same
// process as the hub (its slices run in turn with the hub's, never together).
import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';

const COLUMNS = `a.id, a.name, a.display_name as "displayName", a.description, a.tags, a.category, a.scope, a.pricing,
  a.usage_status as "usageStatus", a.review_status as "reviewStatus", a.engine, a.expected_input as "expectedInput",
  a.expected_output as "expectedOutput", u.name as "ownerName", a.usage_count as "usageCount", a.session_count as "sessionCount",
  a.runs, a.cost, a.earn, (select count(*)::int from agent_favorites f2 where f2.agent_id = a.id) as "favoriteCount", a.enable, a.version, a.updated_at, a.created_at`;

export interface Peer {
  url: string;
  close(): Promise<void>;
}

export async function startFastifyPeer(databaseUrl: string, poolSize = 10): Promise<Peer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  const app: FastifyInstance = Fastify({ logger: false });
  const principal = async (auth: string | undefined) => {
    const key = auth?.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!key) return undefined;
    const hash = createHash('sha256').update(key).digest('hex');
    const r = await pool.query('select user_id from api_keys where hash = $1', [hash]);
    return r.rows[0]?.user_id as string | undefined;
  };
  const view = (row: any, favorited: boolean) => ({
    ...row,
    recent: new Date(row.updated_at).getTime(),
    createdAt: new Date(row.created_at).toISOString(),
    updated_at: undefined,
    created_at: undefined,
    favorited,
    sharedWithMe: false,
  });
  app.get<{ Params: { id: string } }>('/peer/agents/:id', async (req, reply) => {
    const user = await principal(req.headers.authorization);
    if (!user) return reply.code(401).send({ code: 4010, message: 'unauthenticated', data: null });
    const r = await pool.query(
      `select ${COLUMNS}, exists(select 1 from agent_favorites f where f.agent_id = a.id and f.user_id = $2) as fav
         from agents a join users u on u.id = a.owner_id where a.id = $1 and a.review_status = 'approved' and a.scope = 'public'`,
      [req.params.id, user],
    );
    if (!r.rows.length) return reply.code(404).send({ code: 4040, message: 'agent not found', data: null });
    const { fav, ...row } = r.rows[0];
    return { code: 0, message: 'ok', data: view(row, fav) };
  });
  app.get<{ Querystring: { pageSize?: string } }>('/peer/agents', async (req, reply) => {
    const user = await principal(req.headers.authorization);
    if (!user) return reply.code(401).send({ code: 4010, message: 'unauthenticated', data: null });
    const pageSize = Math.min(50, Number(req.query.pageSize ?? 20) || 20);
    const r = await pool.query(
      `select ${COLUMNS}, exists(select 1 from agent_favorites f where f.agent_id = a.id and f.user_id = $2) as fav, count(*) over () as total
         from agents a join users u on u.id = a.owner_id where a.review_status = 'approved' and a.scope = 'public' and a.enable
        order by a.usage_count desc, a.id limit $1`,
      [pageSize, user],
    );
    const total = Number(r.rows[0]?.total ?? 0);
    const items = r.rows.map(({ fav, total: _t, ...row }) => view(row, fav));
    return { code: 0, message: 'ok', data: { items, total, page: 1, pageSize, hasMore: pageSize < total } };
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}
