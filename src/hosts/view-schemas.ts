// Schemas of the host views (service.ts), for the OpenAPI document's response `data`.
import Type from 'typebox';
import { Engine } from '../../host-protocol/frames.js';

const Status = Type.Union([Type.Literal('online'), Type.Literal('busy'), Type.Literal('offline')]);

/** HostView; `modelConfig` is filled by the model-configs domain (null when none is applied). */
export const Host = Type.Object({
  id: Type.String(),
  name: Type.String(),
  remark: Type.Union([Type.String(), Type.Null()]),
  status: Status,
  engines: Type.Array(Engine),
  capacity: Type.Integer(),
  running: Type.Integer(),
  lastSeenAt: Type.Union([Type.Integer({ description: 'ms since the epoch' }), Type.Null()]),
  cliVersion: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.Integer({ description: 'ms since the epoch' }),
  modelConfig: Type.Unknown({ description: 'the applied model configuration and its sync state, or null' }),
});

export const HostList = Type.Object({ items: Type.Array(Host), total: Type.Integer() });
export const PairKey = Type.Object({ pairKey: Type.String(), expiresAt: Type.Integer({ description: 'ms since the epoch' }) });
export const Paired = Type.Object({ hostId: Type.String(), credential: Type.String({ description: 'shown once: the host keeps it' }) });
export const HeartbeatAnswer = Type.Object({ hostId: Type.String(), status: Status, heartbeatMs: Type.Integer() });
export const AvailableHosts = Type.Array(Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('online'), Type.Literal('busy')]),
  engines: Type.Array(Type.Object({ id: Type.String(), displayName: Type.String() })),
}));
export const HostDeleted = Type.Object({ deleted: Type.Literal(true) });
