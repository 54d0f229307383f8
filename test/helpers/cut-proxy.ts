// A TCP proxy in front of a hub whose connections a test can cut at once:
// a network drop as the client sees it (its streams end mid-turn).
import net from 'node:net';

export interface CutProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Destroys every connection through the proxy; new ones still pass. */
  cut(): number;
  close(): Promise<void>;
}

/** `target`: the hub's port, or a function giving it (a proxy started before its hub, whose address the hub's config needs). */
export async function startCutProxy(target: number | (() => number)): Promise<CutProxy> {
  const live = new Set<net.Socket>();
  const server = net.createServer((c) => {
    const u = net.connect(typeof target === 'number' ? target : target(), '127.0.0.1');
    live.add(c);
    const kill = () => {
      live.delete(c);
      c.destroy();
      u.destroy();
    };
    c.pipe(u).on('error', kill);
    u.pipe(c).on('error', kill);
    c.on('close', kill).on('error', kill);
    u.on('close', kill).on('error', kill);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut() {
      const n = live.size;
      for (const c of [...live]) c.destroy();
      return n;
    },
    close: () => new Promise<void>((r) => {
      for (const c of live) c.destroy();
      server.close(() => r());
    }),
  };
}
