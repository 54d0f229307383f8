// A local SMS webhook (the hub's SMS_WEBHOOK_URL) that keeps what it receives,
// so a test reads the code the hub sent; `failNext` answers the next send 500.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestHub } from './hub.js';

export interface SmsWebhook {
  url: string;
  inbox: any[];
  failNext: boolean;
  /** The newest code sent to `phone`. */
  lastCodeFor(phone: string): string;
  close(): Promise<void>;
}

export async function startSmsWebhook(): Promise<SmsWebhook> {
  const state = { inbox: [] as any[], failNext: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (state.failNext) {
        state.failNext = false;
        res.writeHead(500).end();
        return;
      }
      state.inbox.push(JSON.parse(Buffer.concat(chunks).toString()));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`,
    lastCodeFor: (phone: string) => [...state.inbox].reverse().find((m) => m.phone === phone)?.code as string,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

/** One code a minute per account: a test moves the codes sent back instead of waiting. */
export const ageCodes = (t: TestHub) => t.hub.ctx.em().execute(`update phone_codes set created_at = now() - interval '2 minutes'`);
