import { z } from 'zod';

/**
 * The ERP sends canonical events (src/domain/events.ts, docs/events.md) in their wire form:
 * one event, or an array of them. The body is only split here; each event is then read with the
 * CanonicalEvent schema on its own, so one bad event does not reject its batch.
 */
export const ErpBody = z.union([z.array(z.unknown()), z.looseObject({})], {
  error: 'must be a canonical event (a JSON object) or an array of them',
});
export type ErpBody = z.infer<typeof ErpBody>;

/** Standard Webhooks headers (github.com/standard-webhooks/standard-webhooks, spec). */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
