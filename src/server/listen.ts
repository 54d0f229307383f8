// Listening on the hub's port. The bind is exclusive (no SO_REUSEPORT): a
// second hub started on a port already in use fails with a clear message
// instead of silently sharing the port and splitting traffic between two
// databases. SO_REUSEADDR stays on (uSockets sets it for every fixed port),
// so a restart on the same port right after a stop still binds at once.
import { uws, type TemplatedApp, type us_listen_socket } from './uws.js';

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (typed as the ListenOptions enum, a value on the module). */
const EXCLUSIVE_PORT: number = (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT;

export function listenExclusive(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    // The (host, port, options, cb) form exists at run time; the package's typings lack that overload.
    const listen = app.listen as unknown as (h: string, p: number, o: number, cb: (s: us_listen_socket | false) => void) => void;
    listen.call(app, host, port, EXCLUSIVE_PORT, (s) => {
      if (s) return resolve(s);
      reject(new Error(`cannot listen on ${host}:${port}: port ${port} is already in use (another hub or program holds it) or the address is not available here; stop that program or choose another PORT`));
    });
  });
}
