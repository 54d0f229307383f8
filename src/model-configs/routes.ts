import Type from 'typebox';
import type { Config } from '../config.js';
import type { HttpApi } from '../server/http.js';
import { compileBody } from '../server/schema.js';
import { created } from '../server/reply.js';
import type { ModelConfigService } from './service.js';
import type { ModelBindings } from './bindings.js';
import { testConfig } from './tester.js';
import type { HostProbe } from './host-probe.js';
import { Applied, ModelConfigDeleted, ModelConfigList, ModelConfigView } from './view-schemas.js';
import { ModelTestResult } from '../../host-protocol/frames.js';

/** Values that reach an env var on the owner's machine: no whitespace, no C0 or C1 control (ESC, BEL, DEL, NEL…). */
const NO_SPACE_OR_CONTROL = '^[^\\s\\u0000-\\u001f\\u007f-\\u009f]+$';

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  apiType: Type.Union([Type.Literal('anthropic'), Type.Literal('openai')]),
  // No whitespace or control character: the URL parser drops tabs and newlines inside and controls around it,
  // so what the test reached was not what the hosts' ANTHROPIC_BASE_URL was given (the text as sent).
  baseUrl: Type.String({ minLength: 1, maxLength: 2000, pattern: NO_SPACE_OR_CONTROL }),
  // Printable ASCII without spaces: it goes into an HTTP header and an env var.
  apiKey: Type.String({ minLength: 1, maxLength: 4000, pattern: '^[!-~]+$' }),
  authMode: Type.Union([Type.Literal('bearer'), Type.Literal('x-api-key')]),
  modelName: Type.String({ minLength: 1, maxLength: 200, pattern: NO_SPACE_OR_CONTROL }),
};

export const Create = compileBody(
  Type.Object(
    { name: fields.name, apiType: fields.apiType, baseUrl: fields.baseUrl, apiKey: fields.apiKey, authMode: Type.Optional(fields.authMode), modelName: fields.modelName },
    { additionalProperties: false },
  ),
);
export const Patch = compileBody(
  Type.Object(
    {
      name: Type.Optional(fields.name),
      apiType: Type.Optional(fields.apiType),
      baseUrl: Type.Optional(fields.baseUrl),
      apiKey: Type.Optional(fields.apiKey),
      authMode: Type.Optional(fields.authMode),
      modelName: Type.Optional(fields.modelName),
    },
    { additionalProperties: false },
  ),
);
// name and authMode are accepted (a form may send them) but play no part in the test.
export const Test = compileBody(
  Type.Object(
    {
      id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      apiType: Type.Optional(fields.apiType),
      baseUrl: Type.Optional(fields.baseUrl),
      apiKey: Type.Optional(fields.apiKey),
      modelName: Type.Optional(fields.modelName),
      name: Type.Optional(fields.name),
      authMode: Type.Optional(fields.authMode),
      hostId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    },
    { additionalProperties: false },
  ),
);
const Apply = compileBody(
  Type.Object({ configId: Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()]) }, { additionalProperties: false }),
);

export function modelConfigRoutes(api: HttpApi, cfg: Config, configs: ModelConfigService, bindings?: ModelBindings, hostProbe?: HostProbe): void {
  api.route({ method: 'GET', path: '/api/v1/model-configs', auth: 'user', data: ModelConfigList, handler: (r) => configs.list(r.principal.userId) });
  api.route({
    method: 'POST', path: '/api/v1/model-configs', auth: 'user', body: Create, data: ModelConfigView, doc: { status: 201 },
    handler: async (r) => created(await configs.create(r.principal.userId, r.body)),
  });
  api.route({
    method: 'POST', path: '/api/v1/model-configs/test', auth: 'user', body: Test, data: ModelTestResult,
    handler: (r) => testConfig(cfg, configs, r.principal.userId, r.body, hostProbe),
  });
  api.route({ method: 'GET', path: '/api/v1/model-configs/:id', auth: 'user', data: ModelConfigView, handler: (r) => configs.get(r.principal.userId, r.params.id) });
  api.route({
    method: 'PATCH', path: '/api/v1/model-configs/:id', auth: 'user', body: Patch, data: ModelConfigView,
    handler: (r) => configs.update(r.principal.userId, r.params.id, r.body),
  });
  api.route({ method: 'DELETE', path: '/api/v1/model-configs/:id', auth: 'user', data: ModelConfigDeleted, handler: (r) => configs.remove(r.principal.userId, r.params.id) });
  if (bindings) {
    api.route({
      method: 'POST', path: '/api/v1/hosts/:id/model-config', auth: 'user', body: Apply, data: Applied,
      handler: (r) => bindings.apply(r.principal.userId, r.params.id, r.body.configId),
    });
  }
}
