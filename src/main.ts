// Reads configuration, builds the hub, wires signals. Nothing else.
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './log.js';

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  // A configuration mistake is the operator's to fix: the variable and what was wrong, exit 2, no stack trace.
  if (!(e instanceof ConfigError)) throw e;
  process.stderr.write(`agent-hub: configuration error: ${e.message}\n`);
  process.exit(2);
}
const log = createLogger(config.logLevel, { node: config.nodeId });
// The embedded database boots first, the rest of the hub loads meanwhile: PGlite's WebAssembly
// compiles on V8's background threads while this thread loads MikroORM and the domains.
const embedded = config.databaseUrl ? undefined : import('./db/embedded.js').then((m) => m.startEmbedded(config.dataDir, log));
embedded?.catch(() => {}); // awaited (and reported) by buildHub; this only keeps a failed import from being "unhandled"
try {
  const { buildHub } = await import('./hub.js');
  const hub = await buildHub(config, { log, embedded });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    // The bound on a stop: drain (at most half of it, see hub.ts), then the hooks; past it, exit anyway.
    const force = setTimeout(() => {
      log.warn('shutdown bound reached; exiting', { ms: config.shutdownTimeoutMs });
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    await hub.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
} catch (e) {
  log.error('hub failed to start', { err: e });
  process.exit(1);
}
