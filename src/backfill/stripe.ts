import { z } from 'zod';
import type { Secret } from '../domain/secret.js';
import { mapCreditNoteEvent, mapInvoiceEvent } from '../connectors/stripe/map.js';
import { StripeCreditNoteEvent, StripeInvoiceEvent } from '../connectors/stripe/schemas.js';
import { platformGet, type PlatformGetOptions } from './get.js';
import type { BackfillDelivery } from './shopify.js';
import { describeIssues } from '../domain/field-errors.js';

/**
 * Stripe's own API for `taxsync backfill --source stripe`: invoices and credit notes created since
 * a time, listed 100 at a time with `starting_after` (Stripe API reference, "Pagination": a list
 * object `{object: "list", data, has_more, url}`), each turned into the event a webhook would have
 * carried and mapped by the Stripe connector's own functions. A 429 is waited out (Retry-After when
 * given, else one second, doubling) a few times.
 */

export const StripeList = z.looseObject({
  object: z.literal('list'),
  data: z.array(z.looseObject({ id: z.string().min(1) })),
  has_more: z.boolean(),
});

export type StripeResource = 'invoices' | 'credit_notes';

export interface StripeLister {
  /** One page of a resource created at or after `since`, after the object id `startingAfter`. */
  page(resource: StripeResource, since: Date, startingAfter: string | undefined): Promise<z.infer<typeof StripeList>>;
}

export function createStripeLister(options: { baseUrl: string; apiKey: Secret; sleep?: (ms: number) => Promise<void> }): StripeLister {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return {
    async page(resource, since, startingAfter) {
      const url = new URL(`/v1/${resource}`, options.baseUrl);
      url.searchParams.set('limit', '100');
      url.searchParams.set('created[gte]', String(Math.floor(since.getTime() / 1000)));
      if (startingAfter !== undefined) url.searchParams.set('starting_after', startingAfter);
      const res = await platformGet(url, { platform: 'Stripe', headers: stripeHeaders(options.apiKey), sleep });
      const parsed = StripeList.safeParse(res.body);
      if (!parsed.success) throw new Error(`Stripe's /v1/${resource} answer is not a list object: ${describeIssues(parsed.error.issues, { limit: 3 })}`);
      return parsed.data;
    },
  };
}

const stripeHeaders = (apiKey: Secret) => ({ authorization: `Bearer ${apiKey.reveal()}` });

/**
 * `GET /v1/invoices/:id` (a waiting refund's original, Stripe API reference "Retrieve an
 * invoice"): the invoice as the delivery its webhook would have been.
 */
export async function fetchStripeInvoice(
  options: { baseUrl: string; apiKey: Secret } & Pick<PlatformGetOptions, 'sleep' | 'rateLimitRetries' | 'maxRetryWaitMs' | 'timeoutMs'>,
  id: string,
  source: string,
): Promise<BackfillDelivery[]> {
  const url = new URL(`/v1/invoices/${encodeURIComponent(id)}`, options.baseUrl);
  const res = await platformGet(url, { ...options, platform: 'Stripe', headers: stripeHeaders(options.apiKey) });
  const parsed = z.looseObject({ id: z.string().min(1) }).safeParse(res.body);
  if (!parsed.success) throw new Error(`Stripe's ${url.pathname} answer is not an invoice: ${describeIssues(parsed.error.issues, { limit: 3 })}`);
  const { id: deliveryId, result } = backfillEvents('invoices', parsed.data, source);
  return [{ objectId: parsed.data.id, id: deliveryId, result }];
}

/** When the object last changed as far as its own fields say (Stripe objects carry no updated time). */
function changedAt(object: Record<string, unknown>): number {
  const t = (object.status_transitions ?? {}) as Record<string, unknown>;
  const times = [object.created, t.finalized_at, t.paid_at, t.voided_at, t.marked_uncollectible_at, object.voided_at].filter((v): v is number => typeof v === 'number');
  return Math.max(...times);
}

/**
 * PURE: a listed object as the webhook event that would have carried it, mapped by the connector.
 * The event id names the object and its state, so a second backfill of the same state is a
 * duplicate delivery, and the latest-state store orders it against real webhooks by time.
 */
export function backfillEvents(resource: StripeResource, object: Record<string, unknown>, source: string): { id: string; result: ReturnType<typeof mapInvoiceEvent> } {
  const status = typeof object.status === 'string' ? object.status : 'unknown';
  const created = changedAt(object);
  const id = `evt_backfill_${String(object.id)}_${status}_${created}`;
  if (resource === 'invoices') {
    const type = status === 'void' ? 'invoice.voided' : status === 'paid' ? 'invoice.paid' : 'invoice.finalized';
    const event = StripeInvoiceEvent.safeParse({ id, object: 'event', type, created, data: { object } });
    if (!event.success) return { id, result: { kind: 'invalid', message: `invoice ${String(object.id)}: ${describeIssues(event.error.issues, { limit: 3 })}` } };
    return { id, result: mapInvoiceEvent(event.data, { source }) };
  }
  const type = status === 'void' ? 'credit_note.voided' : 'credit_note.created';
  const event = StripeCreditNoteEvent.safeParse({ id, object: 'event', type, created, data: { object } });
  if (!event.success) return { id, result: { kind: 'invalid', message: `credit note ${String(object.id)}: ${describeIssues(event.error.issues, { limit: 3 })}` } };
  return { id, result: mapCreditNoteEvent(event.data, { source }) };
}

