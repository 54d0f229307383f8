import { EntitySchema, BigIntType } from '@mikro-orm/postgresql';

export type Role = 'user' | 'admin';

export class User {
  id!: string;
  name!: string;
  role: Role = 'user';
  email: string | null = null;
  phone: string | null = null;
  countryCode: string | null = null;
  /** Token balance; moved only together with a ledger entry (billing/). */
  balance = 0;
  planId: string | null = null;
  planExpireAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export class ApiKey {
  id!: string;
  userId!: string;
  name!: string;
  /** sha256 of the whole key; the key itself is shown once and never stored. */
  hash!: string;
  /** First characters of the key, for recognising it in a list. */
  preview!: string;
  lastUsedAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

/** A browser login: the refresh token's hash; access JWTs carry its id as `sid`. */
export class AuthSession {
  id!: string;
  userId!: string;
  refreshHash!: string;
  expiresAt!: Date;
  revokedAt: Date | null = null;
  createdAt: Date = new Date();
}

/** A link between a user and an external identity (login provider, chat platform). */
export class Identity {
  id!: string;
  userId!: string;
  provider!: string;
  subject!: string;
  displayName: string | null = null;
  createdAt: Date = new Date();
}

export const UserSchema = new EntitySchema<User>({
  class: User,
  tableName: 'users',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    role: { type: 'string' },
    email: { type: 'string', nullable: true },
    phone: { type: 'string', nullable: true },
    countryCode: { type: 'string', nullable: true },
    balance: { type: new BigIntType('number') },
    planId: { type: 'string', nullable: true },
    planExpireAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date', onUpdate: () => new Date() },
  },
});

export const ApiKeySchema = new EntitySchema<ApiKey>({
  class: ApiKey,
  tableName: 'api_keys',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    name: { type: 'string' },
    hash: { type: 'string', unique: true },
    preview: { type: 'string' },
    lastUsedAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date', onUpdate: () => new Date() },
  },
});

export const AuthSessionSchema = new EntitySchema<AuthSession>({
  class: AuthSession,
  tableName: 'auth_sessions',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    refreshHash: { type: 'string', unique: true },
    expiresAt: { type: 'Date' },
    revokedAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
  },
});

export const IdentitySchema = new EntitySchema<Identity>({
  class: Identity,
  tableName: 'identities',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    provider: { type: 'string' },
    subject: { type: 'string' },
    displayName: { type: 'string', nullable: true },
    createdAt: { type: 'Date' },
  },
});

export const accountEntities = [UserSchema, ApiKeySchema, AuthSessionSchema, IdentitySchema];
