// Builds the login flow and the bindings (phone, identities, chat platform)
// and registers their routes.
import type { HubContext } from '../context.js';
import type { HttpApi } from '../server/http.js';
import type { Authenticator } from './authenticator.js';
import { LoginService } from './login.js';
import { loginRoutes } from './login-routes.js';
import { BindingService } from './bindings.js';
import { bindingRoutes } from './bindings-routes.js';
import { PhoneCodes } from './phone.js';
import { ChatappBinding } from './chatapp.js';
import { smsSenderFrom, type SmsSender } from './sms.js';
import type { Limiter } from '../ratelimit/limiter.js';

export function buildAccountFlows(ctx: HubContext, api: HttpApi, auth: Authenticator, limiter?: Limiter, sms: SmsSender | undefined = smsSenderFrom(ctx.config)) {
  const login = new LoginService(ctx, auth);
  const bindings = new BindingService(ctx, (userId) => login.endLogins(userId));
  const phone = new PhoneCodes(ctx, sms, limiter);
  const chatapp = new ChatappBinding(ctx);
  loginRoutes(api, login, bindings);
  bindingRoutes(api, { bindings, phone, chatapp });
  return { login, bindings, phone, chatapp };
}
