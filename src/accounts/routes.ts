import Type from 'typebox';
import type { HttpApi } from '../server/http.js';
import { compileBody, compileQuery } from '../server/schema.js';
import { created } from '../server/reply.js';
import { userView } from './views.js';
import type { AccountService } from './service.js';
import { ApiKeyList, KeyDeleted, NewApiKey, NewUser, User, UserDeleted, UserPage, UsersSummary } from './view-schemas.js';
import { PAGE_MAX } from '../paging.js';

const KeyCreate = compileBody(Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }));
export const UserCreate = compileBody(
  Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 80 }), role: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('admin')])) },
    { additionalProperties: false },
  ),
);
export const UserList = compileQuery(
  Type.Object(
    {
      keyword: Type.Optional(Type.String({ maxLength: 100 })),
      role: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('admin')])),
      page: Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1 }),
      pageSize: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    },
    { additionalProperties: false },
  ),
);

export function accountRoutes(api: HttpApi, accounts: AccountService): void {
  api.route({ method: 'GET', path: '/api/v1/me', auth: 'user', data: User, handler: async (r) => userView(await accounts.getUser(r.principal.userId)) });

  api.route({ method: 'GET', path: '/api/v1/me/keys', auth: 'user', data: ApiKeyList, handler: (r) => accounts.listKeys(r.principal.userId, r.principal.keyId) });
  api.route({
    method: 'POST', path: '/api/v1/me/keys', auth: 'user', body: KeyCreate, data: NewApiKey, doc: { status: 201 },
    handler: async (r) => created(await accounts.createKey(r.principal.userId, r.body.name)),
  });
  api.route({ method: 'POST', path: '/api/v1/me/keys/:id/refresh', auth: 'user', data: NewApiKey, handler: (r) => accounts.refreshKey(r.principal.userId, r.params.id) });
  api.route({ method: 'DELETE', path: '/api/v1/me/keys/:id', auth: 'user', data: KeyDeleted, handler: (r) => accounts.deleteKey(r.principal.userId, r.params.id) });

  api.route({
    method: 'POST', path: '/api/v1/admin/users', auth: 'admin', body: UserCreate, data: NewUser, doc: { status: 201 },
    handler: async (r) => created(await accounts.createUser(r.body.name, r.body.role ?? 'user')),
  });
  api.route({ method: 'GET', path: '/api/v1/admin/users', auth: 'admin', query: UserList, data: UserPage, handler: (r) => accounts.listUsers(r.query) });
  api.route({ method: 'GET', path: '/api/v1/admin/users/summary', auth: 'admin', data: UsersSummary, handler: () => accounts.usersSummary() });
  api.route({ method: 'DELETE', path: '/api/v1/admin/users/:id', auth: 'admin', data: UserDeleted, handler: (r) => accounts.deleteUser(r.principal.userId, r.params.id) });
}
