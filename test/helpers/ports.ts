// Ports for servers a test starts on a fixed port (a hub, a Redis, a PostgreSQL
// cluster, a process restarted on the port it had). They are drawn below the
// kernel's ephemeral range: a port from that range, once released, can be taken
// by any outgoing connection of a test running beside this one (to PostgreSQL,
// Redis, a hub) before the server binds it — a CI run failed that way.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

/** The low end of the kernel's ephemeral port range (Linux reads it from /proc; the IANA range's start elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > LOWEST + 100) return low;
  } catch {
    // not Linux
  }
  return 32_768;
}

/** A port below the ephemeral range, drawn at random. */
export function drawPort(): number {
  return LOWEST + Math.floor(Math.random() * (ephemeralLow() - LOWEST));
}

/** A port below the ephemeral range that nothing listens on now (checked by binding it on 127.0.0.1). */
export async function freePort(): Promise<number> {
  for (let i = 0; ; i++) {
    const port = drawPort();
    const s = createServer();
    const bound = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => r(true));
    });
    if (bound) {
      await new Promise((r) => s.close(r));
      return port;
    }
    if (i >= 50) throw new Error('no free port below the ephemeral range');
  }
}
