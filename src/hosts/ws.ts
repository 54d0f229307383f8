// The WebSocket transport of the host channel, on the hub's uWS app. It
// authenticates the host credential on upgrade, decodes each frame and hands
// it to the host's connection object; nothing else lives here. No exception
// may cross a uWS callback.
import type { TemplatedApp } from '../server/uws.js';
import { decodeHostFrame } from '../../host-protocol/codec.js';
import { isPlainPing } from '../../host-protocol/ping.js';
import { CloseCodes, HOST_WS_PATH } from '../../host-protocol/version.js';
import { FRAME_MAX_BYTES } from '../../host-protocol/limits.js';
import type { Logger } from '../log.js';
import type { HostConnection } from './connection.js';
import type { HostChannels } from './gateway-impl.js';
import type { HostStore } from './store.js';
import type { FailedAuth } from '../ratelimit/failures.js';
import { ConnectRate } from './connect-rate.js';

export function attachHostSocket(app: TemplatedApp, channels: HostChannels, store: HostStore, log: Logger, failures?: FailedAuth, connectsPerMinute?: number): void {
  const connects = new ConnectRate(connectsPerMinute);
  // uWS copies the upgrade's user data into its own object (own fields only, no
  // prototype), so the connection travels as a field.
  app.ws<{ c: HostConnection }>(HOST_WS_PATH, {
    maxPayloadLength: FRAME_MAX_BYTES,
    // Liveness is the channel sweep's job (app-level pings); uWS's own timer stays off.
    idleTimeout: 0,
    sendPingsAutomatically: false,
    maxBackpressure: 64 * 1024 * 1024,
    compression: 0,

    upgrade: (res, req, context) => {
      // Copy what the upgrade needs before the first await.
      const auth = req.getHeader('authorization');
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const ip = failures?.ipOf({ ip: Buffer.from(res.getRemoteAddressAsText()).toString(), headers: { 'x-forwarded-for': req.getHeader('x-forwarded-for') } });
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      const refuse = (status: string) => {
        if (aborted) return;
        res.cork(() => res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(JSON.stringify({ code: '4010', message: 'host credential missing or invalid', data: null })));
      };
      // An address over its budget of failed credential checks is not looked at (see ratelimit/failures.ts).
      const tooMany = (seconds: number, message = 'too many failed credential checks from this address; retry later') => {
        if (aborted) return;
        res.cork(() =>
          res.writeStatus('429 Too Many Requests').writeHeader('Retry-After', String(seconds)).writeHeader('Content-Type', 'application/json')
            .end(JSON.stringify({ code: '4290', message, data: null })),
        );
      };
      const wait = ip === undefined ? 0 : failures!.retryAfter(ip);
      if (wait) return tooMany(wait);
      const bearer = /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '').trim() : '';
      if (!bearer) return refuse('401 Unauthorized');
      store
        .identify(bearer)
        .then(async (id) => {
          if (aborted) return;
          if (!id) {
            const over = ip === undefined ? 0 : await failures!.failed(ip);
            return over ? tooMany(over) : refuse('401 Unauthorized');
          }
          // A host reconnecting in a loop costs the node a hello's writes and look-ups each time (connect-rate.ts).
          const again = connects.admit(id.hostId);
          if (again) return tooMany(again, 'this host connects too often; retry later');
          res.cork(() => res.upgrade({ c: channels.connection(id) }, key, protocol, extensions, context));
        })
        .catch((e) => {
          log.error('host upgrade failed', { err: e });
          if (!aborted) res.cork(() => res.writeStatus('503 Service Unavailable').end());
        });
    },

    open: (ws) => {
      const conn = ws.getUserData().c;
      conn.open(ws);
      channels.opened(conn);
    },

    message: (ws, message) => {
      const conn = ws.getUserData().c;
      const bytes = new Uint8Array(message);
      // A heartbeat in the CLI's form is answered from its own bytes (host-protocol/ping.ts); uWS's
      // buffer is ours until this callback returns, and a send copies it.
      const ping = isPlainPing(bytes);
      const d = ping ? undefined : decodeHostFrame(bytes);
      if (d?.error !== undefined) return conn.close(CloseCodes.BAD_FRAME);
      try {
        if (d) conn.handle(d.frame);
        else conn.heartbeat(bytes);
      } catch (e) {
        log.error('host frame handler failed', { hostId: conn.hostId, t: d?.frame.t ?? 'ping', err: e });
      }
    },

    drain: (ws) => ws.getUserData().c.drain(),

    close: (ws, code) => {
      try {
        ws.getUserData().c.closed(code);
      } catch (e) {
        log.error('host close handler failed', { err: e });
      }
    },
  });
}
