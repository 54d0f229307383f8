// The benches' HTTP load client: node:http on keep-alive sockets. fetch costs
// the load generator's event loop several times more per request, and at
// hundreds of requests a second that loop's lag would be counted as the
// hub's latency.
import { request, Agent } from 'node:http';

export class LoadClient {
  // `timeout`: an idle pooled socket is dropped before the hub's own 10 s idle close, so a request is
  // never written to a socket the hub is closing at that moment ("socket hang up").
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 128, timeout: 5000 });

  /** POSTs JSON with a bearer key; resolves with the status and the parsed body ({} when not JSON). */
  post(url: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
    const data = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(url, {
        method: 'POST', agent: this.agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let parsed: any = {};
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON: the status says enough */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(data);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
