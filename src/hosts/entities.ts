import { EntitySchema } from '@mikro-orm/postgresql';
import type { Engine } from '../../host-protocol/frames.js';

export class Host {
  id!: string;
  userId!: string;
  name!: string;
  remark: string | null = null;
  /** sha256 of the long-lived host credential; the credential itself is never stored. */
  credentialHash!: string;
  cliVersion: string | null = null;
  protocolVersion: number | null = null;
  engines: Engine[] = [];
  capacity = 1;
  lastSeenAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

/** A single-use key that lets a host CLI pair with an account. */
export class PairKey {
  hash!: string;
  userId!: string;
  expiresAt!: Date;
  usedAt: Date | null = null;
  createdAt: Date = new Date();
}

export const HostSchema = new EntitySchema<Host>({
  class: Host,
  tableName: 'hosts',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    name: { type: 'string' },
    remark: { type: 'string', nullable: true },
    credentialHash: { type: 'string', unique: true },
    cliVersion: { type: 'string', nullable: true },
    protocolVersion: { type: 'integer', nullable: true },
    engines: { type: 'json' },
    capacity: { type: 'integer' },
    lastSeenAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date', onUpdate: () => new Date() },
  },
});

export const PairKeySchema = new EntitySchema<PairKey>({
  class: PairKey,
  tableName: 'pair_keys',
  properties: {
    hash: { type: 'string', primary: true },
    userId: { type: 'string' },
    expiresAt: { type: 'Date' },
    usedAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
  },
});

export const hostEntities = [HostSchema, PairKeySchema];
