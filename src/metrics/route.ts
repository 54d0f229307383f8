// GET /metrics: the Prometheus text format, on the API port, outside the rate
// limit (a scraper polls on a fixed period from one address). With
// METRICS_TOKEN set it wants `Authorization: Bearer <token>`; unset, it is open
// (it carries no ids, only counts) — bind the port privately or set the token.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { HttpApi } from '../server/http.js';
import { text } from '../server/reply.js';
import { fail } from '../errors.js';
import type { HubMetrics } from './metrics.js';
import type { FailedAuth } from '../ratelimit/failures.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function metricsRoute(api: HttpApi, metrics: HubMetrics, token: string | undefined, failedAuth: FailedAuth): void {
  const want = token ? digest(token) : undefined;
  api.route({
    method: 'GET',
    path: '/metrics',
    auth: 'none',
    unlimited: true,
    doc: { summary: 'Prometheus metrics (open unless METRICS_TOKEN is set)', raw: { status: 200, contentType: 'text/plain', description: 'The Prometheus text exposition format.' } },
    handler: async (req) => {
      // Compared as digests: equal lengths, constant time, whatever the caller sent.
      // A wrong token is a failed credential check like a wrong key: budgeted per address (a short token was guessable).
      if (want) await failedAuth.guard(req, () => {
        if (!(req.bearer !== undefined && timingSafeEqual(digest(req.bearer), want))) throw fail('UNAUTHENTICATED', 'metrics need Authorization: Bearer <METRICS_TOKEN>');
      });
      const out = await metrics.scrape();
      return text(200, out.body, out.contentType);
    },
  });
}
