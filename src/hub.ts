// buildHub(config): opens storage and the bus, wires every domain, and
// listens. Returns a started hub with close(). main.ts and the tests are its
// only callers; the order below is the start-up order, and close() runs the
// named shutdown hooks in reverse.
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { uws, type TemplatedApp, type us_listen_socket } from './server/uws.js';
import { HttpApi } from './server/http.js';
import { openDatabase } from './db/orm.js';
import { LocalBus } from './bus/local.js';
import type { Bus } from './bus/bus.js';
import { loadSecrets } from './secrets.js';
import type { HubContext } from './context.js';
import { Authenticator } from './accounts/authenticator.js';
import { AccountService } from './accounts/service.js';
import { accountRoutes } from './accounts/routes.js';
import { ensureAdministrator } from './accounts/bootstrap.js';

export interface Hub {
  port: number;
  url: string;
  ctx: HubContext;
  app: TemplatedApp;
  close(): Promise<void>;
}

export async function buildHub(config: Config, opts: { log?: Logger } = {}): Promise<Hub> {
  const log = opts.log ?? createLogger(config.logLevel, { node: config.nodeId });
  const hooks: Array<{ name: string; run: () => Promise<void> | void }> = [];
  const onShutdown = (name: string, run: () => Promise<void> | void) => hooks.push({ name, run });
  const close = async () => {
    for (const h of hooks.reverse().splice(0)) {
      try {
        await h.run();
      } catch (e) {
        log.warn('shutdown hook failed', { hook: h.name, err: e });
      }
    }
  };

  try {
    const secrets = loadSecrets(config);
    const db = await openDatabase(config, log);
    onShutdown('database', () => db.close());
    const bus: Bus = new LocalBus();
    onShutdown('bus', () => bus.close());
    const ctx: HubContext = { config, log, orm: db.orm, bus, secrets, em: () => db.orm.em.fork() };

    const authenticator = new Authenticator(ctx);
    onShutdown('authenticator', () => authenticator.close());
    const accounts = new AccountService(ctx, authenticator);
    await ensureAdministrator(ctx, accounts);

    const api = new HttpApi({ authenticate: (t) => authenticator.authenticate(t) }, log, config.bodyLimit);
    accountRoutes(api, accounts);

    const app = uws.App();
    api.attach(app);
    const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
      app.listen(config.host, config.port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${config.host}:${config.port}`))));
    });
    onShutdown('listener', () => {
      uws.us_listen_socket_close(listenSocket);
      // Closes every open connection too; keep-alive clients would hold the process otherwise.
      (app as unknown as { close(): void }).close();
    });
    const port = uws.us_socket_local_port(listenSocket);
    log.info('hub listening', { host: config.host, port, database: db.embedded ? 'embedded' : 'postgresql', bus: bus.kind });
    return { port, url: `http://${config.host}:${port}`, ctx, app, close };
  } catch (e) {
    await close();
    throw e;
  }
}
