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

export const ApiKeyList = Type.Object({ items: Type.Array(Type.Object(KeyFields)), total: Type.Integer() });
/** A new or refreshed key: the only answer that carries the key itself. */
export const NewApiKey = Type.Object({ ...KeyFields, key: Type.String({ description: 'shown once' }) });
export const KeyDeleted = Type.Object({ deleted: Type.Literal(true) });

export const UserPage = Type.Object({ items: Type.Array(User), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer(), hasMore: Type.Boolean() });
/** A new user and its first API key (shown once). */
export const NewUser = Type.Object({ user: User, apiKey: Type.String({ description: 'shown once' }) });
export const UserDeleted = Type.Object({ deleted: Type.Literal(true) });
