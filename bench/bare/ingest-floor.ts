/**
 * The floor of ingest: the bare server (node:http, the Shopify HMAC, 202) plus only the steps
 * taxsync's invariants require, done with taxsync's own code and nothing else around them (no
 * fastify, logging, metrics, activity). BENCH_FLOOR_STEPS picks the steps, comma-separated:
 *
 * - `read`: the order read at the door (JSON.parse, the Shopify schema, the mapping to a canonical
 *   event with exact decimals, the canonical event's own check), as src/connectors/shopify does;
 * - `store`: the dedupe check and taxsync's producer (latest-state write, one job per record, the
 *   delivery marker, in one MULTI) with its durable acknowledgement (TAXSYNC_ACK_DURABILITY).
 *
 * - `parse`: instead of `read`, only JSON.parse and the order's id and time: the least any reading of
 *   the order costs, whatever validates it.
 *
 * Without `read` or `parse`, `store` stores one canonical event prepared at start (with the delivery's own
 * ids), so the two steps' costs can be told apart. Settings: REDIS_URL, BENCH_PREFIX,
 * BENCH_SECRET, BENCH_PORT, BENCH_FLOOR_STEPS, TAXSYNC_ACK_DURABILITY.
 */
import { createServer, type ServerResponse } from 'node:http';
import { shopifyConnector } from '../../src/connectors/shopify/index.js';
import type { ConnectorSettings } from '../../src/connectors/types.js';
import type { CanonicalEvent } from '../../src/domain/events.js';
import { createAckGuard } from '../../src/queue/ack-durability.js';
import { closeQueues, createQueues, createRedis, whenReady } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { createProducer } from '../../src/queue/producer.js';
import { signedShopifyOrder } from '../lib/shopify-order.js';
import { verifiedShopifyBodies } from './verified.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const secret = env('BENCH_SECRET');
const steps = new Set(env('BENCH_FLOOR_STEPS').split(','));
const prefix = env('BENCH_PREFIX');
const settings: ConnectorSettings = { source: 'shopify', secrets: [], toleranceSeconds: 300 };

const connection = createRedis(env('REDIS_URL'), 'producer');
await whenReady(connection);
const queues = createQueues(connection, prefix);
const keys = createKeys(prefix);
const mode = process.env.TAXSYNC_ACK_DURABILITY === 'none' ? 'none' : 'aof';
const ack = createAckGuard(connection, { mode, timeoutMs: 5_000, slotKey: keys.counters });
await ack.ready();
const producer = createProducer({
  queues,
  connection,
  keys,
  deadLetters: createDeadLetterStore(queues['dead-letter']),
  trace: { maxEntries: 50, maxAgeMs: 30 * 24 * 3600_000 },
  deliveryTtlMs: 3 * 24 * 3600_000,
  coalesceDelayMs: 0,
  ack,
});
// Without `read`: one event read once at start; each delivery stores it under its own record.
const prepared = (() => {
  const sample = signedShopifyOrder(0);
  const parsed = shopifyConnector.parse({ headers: sample.headers, rawBody: Buffer.from(sample.body), contentType: 'application/json', receivedAt: new Date() }, settings);
  if (parsed.kind !== 'events') throw new Error('the sample order did not parse');
  return parsed.events[0]!;
})();

const answer = (res: ServerResponse, status: number, body: string) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);

const server = createServer(
  { keepAliveTimeout: 60_000 },
  verifiedShopifyBodies(secret, (raw, req, res) => {
    const headers = req.headers as Record<string, string | undefined>;
    const deliveryId = headers['x-shopify-event-id'] ?? 'none';
    let events: readonly CanonicalEvent[];
    if (steps.has('read')) {
      const parsed = shopifyConnector.parse({ headers, rawBody: raw, contentType: 'application/json', receivedAt: new Date() }, settings);
      if (parsed.kind !== 'events') return answer(res, 400, '{}');
      events = parsed.events;
    } else if (steps.has('parse')) {
      // The least any reading does: JSON.parse, and the record's id and time taken from the order.
      const order = JSON.parse(raw.toString('utf8')) as { id: number; updated_at: string };
      events = [{ ...prepared, id: deliveryId, occurred_at: order.updated_at, record: { ...prepared.record, external_id: String(order.id) } }];
    } else {
      events = [{ ...prepared, id: deliveryId, record: { ...prepared.record, external_id: deliveryId } }];
    }
    if (!steps.has('store')) {
      // Only the reading: the event goes to the queue as the bare server's body does.
      void queues.transactions.add('order', { body: JSON.stringify(events[0]) }, { removeOnComplete: true, removeOnFail: true }).then(
        () => answer(res, 202, '{"status":"accepted"}'),
        () => answer(res, 503, '{}'),
      );
      return;
    }
    void (async () => {
      if (await producer.isDuplicateDelivery('shopify', deliveryId)) return answer(res, 200, '{"status":"duplicate"}');
      await producer.accept({ events, delivery: { connector: 'shopify', id: deliveryId } });
      answer(res, 202, '{"status":"accepted"}');
    })().catch(() => answer(res, 503, '{}'));
  }),
);
server.listen(Number(env('BENCH_PORT')), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void closeQueues(queues).then(() => connection.disconnect());
});
