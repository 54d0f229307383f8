// HTTP surface of bindings: phone, chat platform, and the bot's confirmation.
import Type from 'typebox';
import type { HttpApi } from '../server/http.js';
import { compileBody } from '../server/schema.js';
import { created } from '../server/reply.js';
import type { BindingService } from './bindings.js';
import type { PhoneCodes } from './phone.js';
import { normalizeCountryCode } from './phone.js';
import type { ChatappBinding } from './chatapp.js';
import * as V from './view-schemas.js';

const closed = { additionalProperties: false } as const;
const phone = Type.String({ pattern: '^[0-9]{4,20}$' });
const countryCode = Type.Optional(Type.String({ pattern: '^\\+?[0-9]{1,4}$' }));
const SendCode = compileBody(Type.Object({ phone, countryCode }, closed));
const Bind = compileBody(Type.Object({ phone, countryCode, code: Type.String({ minLength: 1, maxLength: 16 }), verifyToken: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })) }, closed));
const Confirm = compileBody(
  Type.Object(
    { code: Type.String({ minLength: 1, maxLength: 32 }), chatUserId: Type.String({ minLength: 1, maxLength: 128 }), displayName: Type.Optional(Type.String({ maxLength: 100 })) },
    closed,
  ),
);

/** Header the chat-platform bot carries its shared secret in. */
export const CHATAPP_SECRET_HEADER = 'x-chatapp-secret';

export function bindingRoutes(api: HttpApi, s: { bindings: BindingService; phone: PhoneCodes; chatapp: ChatappBinding }): void {
  const { bindings, phone: codes, chatapp } = s;
  api.route({ method: 'GET', path: '/api/v1/me/bindings', auth: 'user', data: V.Bindings, handler: (r) => bindings.bindings(r.principal.userId) });
  api.route({
    method: 'POST', path: '/api/v1/me/phone/send-code', auth: 'user', body: SendCode, data: V.CodeSent,
    handler: (r) => codes.send(r.principal.userId, r.body.phone, normalizeCountryCode(r.body.countryCode)),
  });
  api.route({
    method: 'POST', path: '/api/v1/me/phone/bind', auth: 'user', body: Bind, data: V.Bindings,
    handler: async (r) => {
      await codes.bind(r.principal.userId, r.body.phone, normalizeCountryCode(r.body.countryCode), r.body.code, r.body.verifyToken);
      return bindings.bindings(r.principal.userId);
    },
  });

  api.route({ method: 'POST', path: '/api/v1/me/chatapp/binding-attempts', auth: 'user', data: V.ChatappAttempt, doc: { status: 201 }, handler: async (r) => created(await chatapp.createAttempt(r.principal.userId)) });
  api.route({ method: 'GET', path: '/api/v1/me/chatapp/binding-attempts/:id', auth: 'user', data: V.ChatappAttemptState, handler: (r) => chatapp.attempt(r.principal.userId, r.params.id) });
  api.route({ method: 'GET', path: '/api/v1/me/chatapp/binding', auth: 'user', data: V.ChatappBinding, handler: (r) => chatapp.binding(r.principal.userId) });
  api.route({ method: 'DELETE', path: '/api/v1/me/chatapp/binding', auth: 'user', data: V.Deleted, handler: (r) => chatapp.unbind(r.principal.userId) });
  api.route({ method: 'POST', path: '/api/v1/chatapp/confirm', auth: 'none', body: Confirm, data: V.ChatappConfirmed, handler: (r) => chatapp.confirm(r.headers[CHATAPP_SECRET_HEADER], r.body) });
}
