import type { ConnectionKeys } from '../domain/connection.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import { DEFAULT_TRACE, type TraceSettings } from '../queue/trace.js';
import { splitHeld, traceHeld } from './held.js';
import type { Producer } from '../queue/producer.js';
import { namespacedBackfill, shopifyBackfillDeliveries, type BackfillDelivery, type OrderLister } from './shopify.js';
import { wooBackfillDeliveries } from './woocommerce.js';
import { backfillEvents, type StripeLister, type StripeResource } from './stripe.js';

/**
 * `taxsync backfill --source stripe --since …`: every invoice and credit note Stripe lists since
 * the time, through the Stripe connector's mapping and the webhooks' producer (latest state,
 * dedupe by delivery id): what taxsync already holds is a duplicate or stale and changes nothing,
 * what it missed (an outage) is queued. Each object is accepted with the checkpoint in the same
 * transaction, so an interrupted run continues after the last object it stored.
 * `--source shopify`: every order Shopify lists as updated since the time, as `orders/updated`,
 * and each refund in its `refunds` array as `refunds/create`, the same way. `--source woocommerce`:
 * every order WooCommerce lists as modified since the time, as `order.updated` (refunds inside).
 */

export interface BackfillSummary {
  listed: number;
  queued: number;
  /** Delivered before (a webhook or an earlier backfill), or no newer than what taxsync holds. */
  known: number;
  ignored: number;
  invalid: { id: string; message: string }[];
  resumed_after: string | null;
}

interface CommonDeps {
  redis: RedisClient;
  keys: Keys;
  /** The trace of a record backfill found already held. @defaultValue DEFAULT_TRACE */
  trace?: TraceSettings;
  producer: Pick<Producer, 'accept' | 'isDuplicateDelivery'>;
  /** The connection read (docs/connections.md): its source, its prefix on every id, its own dedupe and checkpoint. */
  connection: ConnectionKeys;
  onProgress?: (resource: string, listed: number) => void;
}

export interface BackfillDeps extends CommonDeps {
  lister: StripeLister;
}

export interface OrdersBackfillDeps extends CommonDeps {
  lister: OrderLister;
}

type Checkpoint = { key: string; value: string; ttlMs: number };

/** What became of one delivery: queued, known before (or no newer than what taxsync holds), ignored or invalid by the connector. */
export type DeliveryOutcome = 'queued' | 'known' | 'ignored' | 'invalid';

/**
 * One delivery through the webhooks' dedupe and producer, as its webhook would have gone; the
 * checkpoint (when given) is stored with it in the same step, or alone when nothing is queued.
 * `byRecord` (`taxsync backfill`): events whose record already holds them are counted known and
 * not queued (./held.ts), whatever their made-up event id.
 * `taxsync backfill` and the fetch of a waiting refund's original both submit this way; the fetch
 * skips the delivery-id check (`byEventsOnly`): a WooCommerce delivery id names the order's
 * state, and the delivery that brought a refund without its order had the same one. Its events
 * are then judged one by one by the latest-state store (the same event again is a duplicate).
 */
export async function acceptDelivery(
  deps: Pick<CommonDeps, 'redis' | 'producer'> & Partial<Pick<CommonDeps, 'keys' | 'trace'>>,
  connector: string,
  delivery: BackfillDelivery,
  options: { checkpoint?: Checkpoint; byEventsOnly?: boolean; byRecord?: boolean } = {},
): Promise<DeliveryOutcome> {
  const { checkpoint } = options;
  const { result } = delivery;
  const mark = async () => {
    if (checkpoint) await deps.redis.set(checkpoint.key, checkpoint.value, 'PX', checkpoint.ttlMs);
  };
  if (result.kind !== 'events') {
    await mark();
    return result.kind === 'ignored' ? 'ignored' : 'invalid';
  }
  if (!options.byEventsOnly && (await deps.producer.isDuplicateDelivery(connector, delivery.id))) {
    await mark();
    return 'known';
  }
  let events = result.events;
  if (options.byRecord && deps.keys !== undefined) {
    const { held, fresh } = await splitHeld(deps.redis, deps.keys, events);
    await traceHeld(deps.redis, deps.keys, deps.trace ?? DEFAULT_TRACE, held, new Date());
    events = fresh;
  }
  const accepted = await deps.producer.accept({ events, delivery: { connector, id: delivery.id }, ...(checkpoint && { checkpoint }) });
  return accepted.outcomes.some((o) => o === 'queued') ? 'queued' : 'known';
}

/** acceptDelivery, counted in the run's summary. */
async function acceptCounted(deps: CommonDeps, summary: BackfillSummary, read: BackfillDelivery, checkpoint: Checkpoint | undefined): Promise<void> {
  const delivery = { ...read, result: namespacedBackfill(read.result, deps.connection) };
  const outcome = await acceptDelivery(deps, deps.connection.id, delivery, { ...(checkpoint && { checkpoint }), byRecord: true });
  if (outcome === 'invalid') summary.invalid.push({ id: delivery.objectId, message: delivery.result.kind === 'invalid' ? delivery.result.message : 'invalid' });
  else summary[outcome] += 1;
}

// A platform's default connection has the platform's name: its checkpoints are where they were.
const checkpointKeyOf = (deps: CommonDeps, since: Date) => `${deps.keys.prefix}:backfill:${deps.connection.id}:${Math.floor(since.getTime() / 1000)}`;

const RESOURCES: readonly StripeResource[] = ['invoices', 'credit_notes'];
const CHECKPOINT_TTL_MS = 7 * 86_400_000;

export async function runStripeBackfill(deps: BackfillDeps, options: { since: Date; fresh?: boolean }): Promise<BackfillSummary> {
  const checkpointKey = checkpointKeyOf(deps, options.since);
  if (options.fresh) await deps.redis.del(checkpointKey);
  const stored = await deps.redis.get(checkpointKey);
  const summary: BackfillSummary = { listed: 0, queued: 0, known: 0, ignored: 0, invalid: [], resumed_after: stored };
  const [doneResource, doneId] = stored === null ? [undefined, undefined] : (stored.split(' ') as [StripeResource, string]);
  let skipping = doneResource !== undefined;
  for (const resource of RESOURCES) {
    if (skipping && resource !== doneResource) continue;
    let after = skipping ? doneId : undefined;
    skipping = false;
    for (;;) {
      const page = await deps.lister.page(resource, options.since, after);
      for (const object of page.data) {
        summary.listed += 1;
        const { id, result } = backfillEvents(resource, object, deps.connection.source);
        const checkpoint = { key: checkpointKey, value: `${resource} ${object.id}`, ttlMs: CHECKPOINT_TTL_MS };
        await acceptCounted(deps, summary, { objectId: object.id, id, result }, checkpoint);
      }
      deps.onProgress?.(resource, summary.listed);
      const last = page.data[page.data.length - 1];
      if (!page.has_more || last === undefined) break;
      after = last.id;
    }
  }
  await deps.redis.del(checkpointKey);
  return summary;
}

/**
 * `taxsync backfill --source shopify|woocommerce`. The checkpoint is `orders <order id> <cursor of
 * its page, or - for the first>`: a resumed run asks for that page again and continues after the
 * order. The checkpoint goes with an order's last delivery (the order, then its refunds), so an
 * interruption never skips a refund.
 */
export async function runOrdersBackfill(
  platform: 'shopify' | 'woocommerce',
  deps: OrdersBackfillDeps,
  options: { since: Date; fresh?: boolean },
): Promise<BackfillSummary> {
  const deliveriesOf = platform === 'shopify' ? shopifyBackfillDeliveries : wooBackfillDeliveries;
  const checkpointKey = checkpointKeyOf(deps, options.since);
  if (options.fresh) await deps.redis.del(checkpointKey);
  const stored = await deps.redis.get(checkpointKey);
  const summary: BackfillSummary = { listed: 0, queued: 0, known: 0, ignored: 0, invalid: [], resumed_after: stored };
  const [, doneOrder, donePage] = stored === null ? [] : stored.split(' ');
  let cursor = donePage === undefined || donePage === '-' ? undefined : donePage;
  let skipThrough = doneOrder;
  for (;;) {
    const page = await deps.lister.page(options.since, cursor);
    let orders = page.orders;
    if (skipThrough !== undefined) {
      const done = orders.findIndex((o) => String(o.id) === skipThrough);
      orders = orders.slice(done + 1);
      skipThrough = undefined;
    }
    for (const order of orders) {
      const deliveries = deliveriesOf(order, deps.connection.source);
      const checkpoint = { key: checkpointKey, value: `orders ${String(order.id)} ${cursor ?? '-'}`, ttlMs: CHECKPOINT_TTL_MS };
      for (const [i, delivery] of deliveries.entries()) {
        summary.listed += 1;
        await acceptCounted(deps, summary, delivery, i === deliveries.length - 1 ? checkpoint : undefined);
      }
    }
    deps.onProgress?.('orders', summary.listed);
    if (page.next === undefined) break;
    cursor = page.next;
  }
  await deps.redis.del(checkpointKey);
  return summary;
}
