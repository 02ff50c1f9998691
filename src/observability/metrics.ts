import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per process (never prom-client's global one, so tests stay isolated). Later parts
 * add their metrics here; `/metrics` exposes all of it.
 */
export interface Metrics {
  registry: Registry;
  webhooks: Counter<'connector' | 'outcome'>;
  events: Counter<'connector' | 'outcome'>;
  vatSubmissions: Counter<'outcome'>;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'taxsync_' });
  return {
    registry,
    webhooks: new Counter({
      name: 'taxsync_webhooks_total',
      help: 'Webhook deliveries by connector and outcome (accepted, duplicate, ignored, invalid, unauthorized, unavailable, …)',
      labelNames: ['connector', 'outcome'],
      registers: [registry],
    }),
    events: new Counter({
      name: 'taxsync_events_received_total',
      help: 'Canonical events by connector and outcome (queued, stale, duplicate, rejected)',
      labelNames: ['connector', 'outcome'],
      registers: [registry],
    }),
    vatSubmissions: new Counter({
      name: 'taxsync_vat_submissions_total',
      help: 'VAT submission attempts by outcome (accepted, accepted_with_warnings, confirmed_by_duplicate, unknown, released, rejected)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
