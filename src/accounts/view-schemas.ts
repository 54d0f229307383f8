// Schemas of the account views (views.ts), for the OpenAPI document's response `data`.
import Type from 'typebox';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const User = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.Union([Type.Literal('user'), Type.Literal('admin')]),
  email: NullableString,
  phone: Type.Union([Type.String({ description: 'masked' }), Type.Null()]),
  balance: Type.Number(),
  planId: NullableString,
  planExpireAt: Type.Union([Type.Integer({ description: 'ms since the epoch' }), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
});

const KeyFields = {
  id: Type.String(),
  name: Type.String(),
  preview: Type.String(),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
};

export const ApiKeyList = Type.Object({
  items: Type.Array(Type.Object({ ...KeyFields, current: Type.Boolean({ description: 'the key this request was signed with' }) })),
  total: Type.Integer(),
});
/** A new or refreshed key: the only answer that carries the key itself. */
export const NewApiKey = Type.Object({ ...KeyFields, key: Type.String({ description: 'shown once' }) });
export const KeyDeleted = Type.Object({ deleted: Type.Literal(true) });

export const UserPage = Type.Object({ items: Type.Array(User), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer(), hasMore: Type.Boolean() });
/** A new user and its first API key (shown once). */
export const NewUser = Type.Object({ user: User, apiKey: Type.String({ description: 'shown once' }) });
export const UserDeleted = Type.Object({ deleted: Type.Literal(true) });

const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);

export const UsersSummary = Type.Object({ total: Type.Integer(), admins: Type.Integer(), newToday: Type.Integer(), newThisWeek: Type.Integer(), subscribed: Type.Integer() });

// ---------- login (login.ts) ----------
/** The provider's authorize URL to send the browser to, and the state the callback brings back. */
/** The sign-in providers the hub offers (none, or its OIDC provider). */
export const Providers = Type.Object({ items: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })) });
export const LoginStart = Type.Object({ url: Type.String(), state: Type.String(), expiresAt: Time });
const TokenFields = {
  accessToken: Type.String({ description: 'a JWT' }),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer({ description: 'seconds' }),
  refreshToken: Type.String(),
  refreshExpiresAt: Time,
  user: User,
};
export const LoginTokens = Type.Object(TokenFields);
export const LoginDone = Type.Object({ ...TokenFields, from: NullableString, linked: Type.Union([Type.String({ description: 'the provider an identity was linked from' }), Type.Null()]) });
export const LoggedOut = Type.Object({ loggedOut: Type.Literal(true) });
export const SsoLogout = Type.Object({ url: Type.String({ description: "the provider's logout address" }), loggedOut: Type.Boolean() });

// ---------- bindings (bindings.ts, phone.ts, chatapp.ts) ----------
export const ChatappBinding = Type.Object({ bound: Type.Boolean(), chatUserId: NullableString, displayName: NullableString, boundAt: NullableTime });
export const Bindings = Type.Object({
  phone: Type.Union([Type.Object({ countryCode: NullableString, number: Type.String({ description: 'masked' }) }), Type.Null()]),
  identities: Type.Array(Type.Object({ provider: Type.String(), displayName: NullableString, linkedAt: Time })),
  chatapp: ChatappBinding,
});
export const Deleted = Type.Object({ deleted: Type.Literal(true) });
export const CodeSent = Type.Object({ sent: Type.Literal(true), countryCode: Type.String(), expiresAt: Time, resendAfterSeconds: Type.Integer() });
export const ChatappAttempt = Type.Object({
  id: Type.String(),
  code: Type.String({ description: 'what the user sends to the bot' }),
  status: Type.Literal('pending'),
  expiresAt: Time,
});
export const ChatappAttemptState = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('bound'), Type.Literal('expired')]),
  expiresAt: Time,
  boundAt: NullableTime,
});
export const ChatappConfirmed = Type.Object({ bound: Type.Literal(true), attemptId: Type.String(), userName: Type.String() });
