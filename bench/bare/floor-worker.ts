/**
 * The floor of scenario 5's worker as a process of its own: scenario 2's floor worker (taxsync's
 * record store around each prepared PUT, bench/lib/baseline.ts) with what an order needs on top:
 * the invoice's customer facts sent first (the customer's writer lock taken with its state read,
 * its PUT, the hash kept as the lock is given back), so each order is two calls as it is for `taxsync work`. No mapping, no body or answer
 * check, no metrics. Settings: REDIS_URL, BENCH_PREFIX, BENCH_API_URL, BENCH_CONCURRENCY.
 */
import { sentHash } from '../../src/processors/sent-hash.js';
import { startFloorWorker } from '../lib/baseline.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const worker = await startFloorWorker(
  env('REDIS_URL'),
  env('BENCH_PREFIX'),
  env('BENCH_API_URL'),
  Number(env('BENCH_CONCURRENCY')),
  (externalId) => JSON.stringify({ source: 'shopify', external_id: externalId }),
  { maxEntries: 50, maxAgeMs: 30 * 24 * 3600_000 },
  {
    customerOf: (event) => {
      const customer = event.type === 'invoice.upserted' ? event.data.customer : undefined;
      if (!customer) return undefined;
      const body = { source: event.record.source, external_id: customer.external_id };
      const key = { kind: 'customer' as const, source: event.record.source, external_id: customer.external_id };
      return { key, offer: { customer, atMs: Date.parse(event.occurred_at) }, body: JSON.stringify(body), hash: sentHash(body) };
    },
  },
);
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
