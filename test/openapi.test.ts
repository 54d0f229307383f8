import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { AgentWrite } from '../src/agents/schemas.js';
import { ErrorCatalogue } from '../src/errors.js';
import { SESSION_EVENT_SCHEMAS } from '../src/sessions/event-schemas.js';
import { seedHost } from './helpers/seed.js';

let t: TestHub;
let doc: any;
before(async () => {
  t = await startTestHub();
  const res = await fetch(t.url + '/api/v1/openapi.json');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.match(res.headers.get('cache-control') ?? '', /max-age=\d+/);
  doc = JSON.parse(await res.text());
});
after(() => t.close());

const toOpenApi = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const resolve = (o: any) => (o?.$ref ? o.$ref.split('/').slice(1).reduce((a: any, k: string) => a[k], doc) : o);

/** A raw GET whose path reaches the server byte for byte (fetch would normalize "..") */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const u = new URL(t.url);
  return new Promise((ok, ko) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => ok({ status: res.statusCode!, body }));
    });
    req.on('error', ko);
    req.end();
  });
}

test('the document is OpenAPI 3.1, anonymous, and lists every registered route with its method', () => {
  assert.equal(doc.openapi, '3.1.0');
  assert.ok(doc.info.title);
  assert.ok(t.hub.routes.length > 50);
  for (const r of t.hub.routes) {
    const op = doc.paths[toOpenApi(r.path)]?.[r.method.toLowerCase()];
    assert.ok(op, `${r.method} ${r.path} is documented`);
    assert.ok(op.responses && Object.keys(op.responses).length > 0, `${r.method} ${r.path} has responses`);
  }
  const documented = Object.values(doc.paths).reduce((n: number, p: any) => n + Object.keys(p).length, 0);
  assert.equal(documented, t.hub.routes.length);
  // Path params become {name} parameters.
  const get = doc.paths['/api/v1/agents/{id}'].get;
  assert.deepEqual(get.parameters.find((p: any) => p.in === 'path'), { name: 'id', in: 'path', required: true, schema: { type: 'string' } });
});

test('auth: bearer scheme; anonymous, optional and user routes say so', () => {
  assert.deepEqual(doc.components.securitySchemes.bearer, { ...doc.components.securitySchemes.bearer, type: 'http', scheme: 'bearer' });
  assert.deepEqual(doc.paths['/api/v1/openapi.json'].get.security, []);
  assert.deepEqual(doc.paths['/api/v1/agents'].get.security, [{}, { bearer: [] }]);
  assert.deepEqual(doc.paths['/api/v1/me'].get.security, [{ bearer: [] }]);
  assert.equal(doc.paths['/api/v1/admin/users'].get['x-auth'], 'admin');
});

test('a request body schema is the typebox schema the server validates with', () => {
  const body = doc.paths['/api/v1/agents'].post.requestBody;
  assert.equal(body.required, true);
  assert.deepEqual(body.content['application/json'].schema, JSON.parse(JSON.stringify(AgentWrite.schema)));
  // Query parameters come from the query schema; server-side defaults make a field optional.
  const q = doc.paths['/api/v1/sessions'].get.parameters;
  const pageSize = q.find((p: any) => p.name === 'pageSize');
  assert.equal(pageSize.in, 'query');
  assert.equal(pageSize.required, false);
  assert.equal(pageSize.schema.maximum, 50);
});

test('error responses come from the catalogue: status and business codes', () => {
  const all = doc.components.schemas.Error['x-catalogue'];
  for (const [name, e] of Object.entries(ErrorCatalogue)) {
    assert.deepEqual(all[name], { status: e.status, code: e.code, message: e.message });
    const byStatus = doc.components.responses[`Error${e.status}`];
    assert.ok(byStatus.allOf === undefined && byStatus.content, `Error${e.status}`);
    assert.ok(byStatus.content['application/json'].schema.allOf[1].properties.code.enum.includes(e.code), `${name} listed under ${e.status}`);
  }
  const post = doc.paths['/api/v1/agents'].post.responses;
  assert.equal(post['401'].$ref, '#/components/responses/Error401');
  assert.ok(resolve(post['401']).content['application/json'].schema.allOf[1].properties.code.enum.includes(ErrorCatalogue.UNAUTHENTICATED.code));
  assert.ok(resolve(post['400']).content['application/json'].schema.allOf[1].properties.code.enum.includes(ErrorCatalogue.VALIDATION.code));
  assert.equal(post.default.$ref, '#/components/responses/Error');
  assert.ok(doc.paths['/api/v1/admin/users'].get.responses['403']);
});

test('responses: the envelope with a data schema; the plain 202; the SSE event types', () => {
  const agent = doc.paths['/api/v1/agents/{id}'].get.responses['200'].content['application/json'].schema;
  assert.deepEqual(agent.allOf[0], { $ref: '#/components/schemas/Envelope' });
  assert.equal(agent.allOf[1].properties.data.type, 'object');
  assert.ok(agent.allOf[1].properties.data.properties.displayName);
  assert.deepEqual(doc.components.schemas.Envelope.required, ['code', 'message', 'data']);

  const send = doc.paths['/api/v1/sessions/{id}/messages'].post.responses;
  const accepted = send['202'].content['application/json'].schema;
  assert.deepEqual(accepted.required.sort(), ['sessionId', 'status', 'taskId']);
  assert.ok(send['200'].content['text/event-stream']);

  const events = doc.paths['/api/v1/sessions/{id}/events'].get.responses['200'].content;
  assert.deepEqual(Object.keys(events), ['text/event-stream']);
  assert.ok(doc.paths['/api/v1/sessions/{id}/events'].get.parameters.some((p: any) => p.in === 'header' && p.name === 'Last-Event-ID'));
  const names = events['text/event-stream'].schema.oneOf.map((o: any) => o.properties.event.const);
  for (const name of Object.keys(SESSION_EVENT_SCHEMAS)) {
    assert.ok(names.includes(name), name);
    assert.ok(doc.components.schemas[`Event.${name}`], `schema of ${name}`);
  }
  assert.ok(names.includes('shutdown'));
  // Hosts, created answers and non-envelope answers.
  const hosts = doc.paths['/api/v1/hosts'].get.responses['200'].content['application/json'].schema.allOf[1].properties.data;
  assert.equal(hosts.properties.items.items.properties.status.anyOf.length, 3);
  assert.ok(doc.paths['/api/v1/hosts/pair-key'].post.responses['201']);
  assert.ok(doc.paths['/api/v1/agents'].post.responses['201']);
  assert.deepEqual(Object.keys(doc.paths['/api/v1/agents/{id}'].delete.responses).filter((s) => /^2/.test(s)), ['204']);
  assert.ok(doc.paths['/api/docs'].get.responses['200'].content['text/html']);
  // Market, sessions, hosts and model configurations: every JSON answer has its data schema.
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    if (!/^\/api\/v1\/(sessions|hosts|model-configs|agents(\/(featured|facets|mine|available-hosts|\{id\}(\/favorite|\/manage)?))?$)/.test(path)) continue;
    for (const [m, op] of Object.entries<any>(ops)) assert.doesNotMatch(JSON.stringify(op.responses), /UndocumentedData/, `${m} ${path}`);
  }
  // A route without a data schema says so instead of inventing one.
  assert.match(doc.components.schemas.UndocumentedData.description, /no schema/);
});

test('/api/docs: an HTML page on the local renderer files, which answer with their content types', async () => {
  const page = await fetch(t.url + '/api/docs');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  const html = await page.text();
  assert.match(html, /src="\/api\/docs\/swagger-ui-bundle\.js"/);
  assert.match(html, /href="\/api\/docs\/swagger-ui\.css"/);
  assert.match(html, /src="\/api\/docs\/init\.js"/);
  assert.match(await (await fetch(t.url + '/api/docs/init.js')).text(), /\/api\/v1\/openapi\.json/);
  assert.doesNotMatch(html, /https?:\/\//, 'no CDN');
  const css = await fetch(t.url + '/api/docs/swagger-ui.css');
  assert.equal(css.status, 200);
  assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
  assert.match(css.headers.get('cache-control') ?? '', /max-age=\d+/);
  assert.ok((await css.text()).includes('.swagger-ui'));
  const js = await fetch(t.url + '/api/docs/swagger-ui-bundle.js');
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.ok((await js.text()).includes('SwaggerUIBundle'));
});

test('/api/docs serves its whitelist only: traversal attempts and other package files → 404', async () => {
  for (const p of [
    '/api/docs/../../package.json',
    '/api/docs/..%2F..%2Fpackage.json',
    '/api/docs/%2E%2E%2F%2E%2E%2Fpackage.json',
    '/api/docs/..%252F..%252Fpackage.json',
    '/api/docs/%2e%2e/%2e%2e/package.json',
    '/api/docs/package.json',
    '/api/docs/index.html',
    '/api/docs/swagger-ui.css.map',
    '/api/docs/constructor',
    '/api/docs/__proto__',
  ]) {
    const r = await rawGet(p);
    assert.equal(r.status, 404, p);
    assert.doesNotMatch(r.body, /"name"\s*:\s*"(agent-hub|swagger-ui-dist)"/, p);
  }
});

test('real answers validate against their documented data schemas', async () => {
  const { Compile } = await import('typebox/compile');
  const check = async (method: string, path: string, route: string, status: number, body?: unknown) => {
    const r = await t.api(method, path, { token: t.adminKey, ...(body === undefined ? {} : { body }) });
    assert.equal(r.status, status, `${method} ${path}`);
    const schema = doc.paths[route][method.toLowerCase()].responses[String(status)].content['application/json'].schema.allOf[1].properties.data;
    const c = Compile(schema);
    assert.ok(c.Check(r.body.data), `${method} ${path}: ${JSON.stringify([...c.Errors(r.body.data)].slice(0, 2))}`);
    return r.body.data;
  };
  const key = await check('POST', '/api/v1/me/keys', '/api/v1/me/keys', 201, { name: 'docs' });
  await check('GET', '/api/v1/me/keys', '/api/v1/me/keys', 200);
  await check('POST', `/api/v1/me/keys/${key.id}/refresh`, '/api/v1/me/keys/{id}/refresh', 200);
  const me = await check('GET', '/api/v1/me', '/api/v1/me', 200);
  const hostId = await seedHost(t, me.id);
  const agent = await check('POST', '/api/v1/agents', '/api/v1/agents', 201, { name: 'documented', scope: 'private', hostId, engine: 'claude-code' });
  await check('GET', `/api/v1/agents/${encodeURIComponent(agent.id)}`, '/api/v1/agents/{id}', 200);
  await check('GET', `/api/v1/agents/${encodeURIComponent(agent.id)}/manage`, '/api/v1/agents/{id}/manage', 200);
  await check('GET', '/api/v1/agents/mine', '/api/v1/agents/mine', 200);
  await check('POST', `/api/v1/agents/${encodeURIComponent(agent.id)}/favorite`, '/api/v1/agents/{id}/favorite', 200);
  await check('DELETE', `/api/v1/agents/${encodeURIComponent(agent.id)}/favorite`, '/api/v1/agents/{id}/favorite', 200);
  await check('GET', '/api/v1/admin/agents', '/api/v1/admin/agents', 200);
  await check('GET', `/api/v1/admin/agents/${encodeURIComponent(agent.id)}/review`, '/api/v1/admin/agents/{id}/review', 200);
  const user = await check('POST', '/api/v1/admin/users', '/api/v1/admin/users', 201, { name: 'reader' });
  await check('GET', '/api/v1/admin/users', '/api/v1/admin/users', 200);
  await check('DELETE', `/api/v1/admin/users/${user.user.id}`, '/api/v1/admin/users/{id}', 200);
  await check('GET', `/api/v1/hosts/${hostId}`, '/api/v1/hosts/{id}', 200);
  await check('GET', '/api/v1/agents/available-hosts', '/api/v1/agents/available-hosts', 200);
  const session = await check('POST', '/api/v1/sessions', '/api/v1/sessions', 201, { agentId: agent.id });
  await check('GET', `/api/v1/sessions/${session.id}?includeMessages=true`, '/api/v1/sessions/{id}', 200);
  await check('GET', `/api/v1/sessions/${session.id}/messages`, '/api/v1/sessions/{id}/messages', 200);
  await check('GET', `/api/v1/sessions/${session.id}/queue`, '/api/v1/sessions/{id}/queue', 200);
  await check('GET', `/api/v1/sessions/${session.id}/cost`, '/api/v1/sessions/{id}/cost', 200);
  await check('GET', '/api/v1/hosts', '/api/v1/hosts', 200);
  await check('GET', '/api/v1/sessions', '/api/v1/sessions', 200);
  await check('GET', '/api/v1/agents', '/api/v1/agents', 200);
  await check('GET', '/api/v1/agents/facets', '/api/v1/agents/facets', 200);
  await check('GET', '/api/v1/me/balance', '/api/v1/me/balance', 200);
  await check('GET', '/api/v1/me/ledger', '/api/v1/me/ledger', 200);
  await check('GET', '/api/v1/plans', '/api/v1/plans', 200);
  await check('GET', '/api/v1/token-packs', '/api/v1/token-packs', 200);
  await check('GET', '/api/v1/store/products', '/api/v1/store/products', 200);
  const mc = await check('POST', '/api/v1/model-configs', '/api/v1/model-configs', 201, { name: 'doc', apiType: 'openai', baseUrl: 'https://models.example.com/v1', apiKey: 'sk-0123456789abcdef', modelName: 'gpt-x' });
  await check('GET', '/api/v1/model-configs', '/api/v1/model-configs', 200);
  await check('PATCH', `/api/v1/model-configs/${mc.id}`, '/api/v1/model-configs/{id}', 200, { name: 'doc2' });
  await check('DELETE', `/api/v1/model-configs/${mc.id}`, '/api/v1/model-configs/{id}', 200);
  await check('DELETE', `/api/v1/me/keys/${key.id}`, '/api/v1/me/keys/{id}', 200);
});
