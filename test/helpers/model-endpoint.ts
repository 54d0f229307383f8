// A local model endpoint of the messages format that takes one key, by x-api-key only, so the hub's
// connectivity test has to detect the mode: anything else is refused 401 in the endpoint's own words
// (which the console shows), a path other than /v1/messages 404.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MessagesEndpoint {
  url: string;
  close(): void;
}

export async function startMessagesEndpoint(key: string, refusal = 'this endpoint wants x-api-key'): Promise<MessagesEndpoint> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url !== '/v1/messages') return res.writeHead(404).end(JSON.stringify({ error: { message: 'no route' } }));
      if (req.headers['x-api-key'] !== key) return res.writeHead(401).end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: refusal } }));
      res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'pong' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
