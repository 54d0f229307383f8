// Schemas of the model-configuration views (views.ts), for the OpenAPI document's response `data`.
import Type from 'typebox';

/** configView: never the key, only its hint. */
export const ModelConfigView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  apiType: Type.Union([Type.Literal('anthropic'), Type.Literal('openai')]),
  baseUrl: Type.String(),
  apiKeyHint: Type.String(),
  authMode: Type.Union([Type.Literal('bearer'), Type.Literal('x-api-key')]),
  modelName: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  hostCount: Type.Integer(),
});

export const ModelConfigList = Type.Object({ items: Type.Array(ModelConfigView), total: Type.Integer() });
export const ModelConfigDeleted = Type.Object({ deleted: Type.Literal(true) });

/** bindings.ts BindingView: the configuration applied to a host and its sync state (also a host view's `modelConfig`). */
export const Binding = Type.Object({
  configId: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('syncing'), Type.Literal('idle'), Type.Literal('pending'), Type.Literal('failed')]),
  lastError: Type.Union([Type.String(), Type.Null()]),
});
export const Applied = Type.Object({ hostId: Type.String(), modelConfig: Type.Union([Binding, Type.Null()]) });
