// HTTP surface of the browser login flow (auth/*) and of identity linking (me/idem/*).
import Type from 'typebox';
import type { HttpApi } from '../server/http.js';
import { compileBody, compileQuery } from '../server/schema.js';
import { fail } from '../errors.js';
import type { LoginService } from './login.js';
import type { BindingService } from './bindings.js';
import { LOGIN_PROVIDER } from './oidc.js';
import * as V from './view-schemas.js';

const closed = { additionalProperties: false } as const;
// `from` is where the web app returns after login: a same-site path only, so
// the flow cannot be turned into an open redirect.
const LoginQuery = compileQuery(Type.Object({ from: Type.Optional(Type.String({ maxLength: 2000, pattern: '^/(?![/\\\\])\\S*$' })) }, closed));
const CallbackBody = compileBody(Type.Object({ code: Type.String({ minLength: 1, maxLength: 4096 }), state: Type.String({ minLength: 1, maxLength: 512 }) }, closed));
const RefreshBody = compileBody(Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 512 }) }, closed));

function loginProvider(p: string): string {
  if (p !== LOGIN_PROVIDER) throw fail('NOT_FOUND', `unknown identity provider "${p.slice(0, 40)}"; this hub knows "${LOGIN_PROVIDER}"`);
  return p;
}

export function loginRoutes(api: HttpApi, login: LoginService, bindings: BindingService): void {
  // An addition to the spec: lets the console offer "Sign in with <provider>" only when the hub has one.
  api.route({ method: 'GET', path: '/api/v1/auth/providers', auth: 'none', data: V.Providers, handler: () => login.providers() });
  api.route({ method: 'GET', path: '/api/v1/auth/login', auth: 'none', query: LoginQuery, data: V.LoginStart, handler: (r) => login.start({ from: r.query.from }) });
  // `optional`: a plain sign-in needs no bearer (a stale one is ignored); a link must be finished by
  // the account that started it, so its bearer is read here (login.ts, callback).
  api.route({ method: 'POST', path: '/api/v1/auth/callback', auth: 'optional', body: CallbackBody, data: V.LoginDone, handler: (r) => login.callback(r.body.code, r.body.state, r.principal?.userId) });
  api.route({ method: 'POST', path: '/api/v1/auth/refresh', auth: 'none', body: RefreshBody, data: V.LoginTokens, handler: (r) => login.refresh(r.body.refresh_token) });
  api.route({ method: 'POST', path: '/api/v1/auth/logout', auth: 'user', data: V.LoggedOut, handler: (r) => login.logout(r.bearer) });
  api.route({ method: 'GET', path: '/api/v1/auth/sso-logout', auth: 'optional', data: V.SsoLogout, handler: (r) => login.ssoLogout(r.principal?.via === 'jwt' ? r.bearer : undefined) });

  api.route({
    method: 'POST', path: '/api/v1/me/idem/:provider/link', auth: 'user', data: V.LoginStart,
    handler: (r) => (loginProvider(r.params.provider), login.start({ linkUserId: r.principal.userId })),
  });
  api.route({ method: 'DELETE', path: '/api/v1/me/idem/:provider', auth: 'user', data: V.Deleted, handler: (r) => bindings.unlinkIdentity(r.principal.userId, loginProvider(r.params.provider)) });
}
