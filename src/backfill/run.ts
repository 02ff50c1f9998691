import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { Producer } from '../queue/producer.js';
import { backfillEvents, type StripeLister, type StripeResource } from './stripe.js';

/**
 * `taxsync backfill --source stripe --since …`: every invoice and credit note Stripe lists since
 * the time, through the Stripe connector's mapping and the webhooks' producer (latest state,
 * dedupe by delivery id): what taxsync already holds is a duplicate or stale and changes nothing,
 * what it missed (an outage) is queued. Each object is accepted with the checkpoint in the same
 * transaction, so an interrupted run continues after the last object it stored.
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

export interface BackfillDeps {
  redis: RedisClient;
  keys: Pick<Keys, 'prefix'>;
  producer: Pick<Producer, 'accept' | 'isDuplicateDelivery'>;
  lister: StripeLister;
  source: string;
  onProgress?: (resource: StripeResource, listed: number) => void;
}

const RESOURCES: readonly StripeResource[] = ['invoices', 'credit_notes'];
const CHECKPOINT_TTL_MS = 7 * 86_400_000;

export async function runStripeBackfill(deps: BackfillDeps, options: { since: Date; fresh?: boolean }): Promise<BackfillSummary> {
  const checkpointKey = `${deps.keys.prefix}:backfill:stripe:${Math.floor(options.since.getTime() / 1000)}`;
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
        const { id, result } = backfillEvents(resource, object, deps.source);
        const checkpoint = { key: checkpointKey, value: `${resource} ${object.id}`, ttlMs: CHECKPOINT_TTL_MS };
        if (result.kind !== 'events') {
          if (result.kind === 'ignored') summary.ignored += 1;
          else summary.invalid.push({ id: object.id, message: result.message });
          await deps.redis.set(checkpoint.key, checkpoint.value, 'PX', checkpoint.ttlMs);
          continue;
        }
        if (await deps.producer.isDuplicateDelivery('stripe', id)) {
          summary.known += 1;
          await deps.redis.set(checkpoint.key, checkpoint.value, 'PX', checkpoint.ttlMs);
          continue;
        }
        const accepted = await deps.producer.accept({ events: result.events, delivery: { connector: 'stripe', id }, checkpoint });
        if (accepted.outcomes.some((o) => o === 'queued')) summary.queued += 1;
        else summary.known += 1;
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
