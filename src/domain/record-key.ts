import { z } from 'zod';
import { LONE_SURROGATE, hasLoneSurrogate, keyPart } from './key-part.js';

/**
 * A record is (kind, source, external_id) (DESIGN.md, data model). Invoices and refunds are both
 * `transaction` records: they share the tax engine's (source, external_id) space.
 */
export const RECORD_KINDS = ['customer', 'transaction', 'exemption', 'vat'] as const;
export const RecordKind = z.enum(RECORD_KINDS);
export type RecordKind = z.infer<typeof RecordKind>;

export const RecordKey = z.strictObject({
  kind: RecordKind,
  source: z.string().regex(/^[a-z][a-z0-9_]*$/, { error: 'source must be a lowercase identifier' }),
  external_id: z
    .string()
    .min(1, { error: 'external_id must not be empty' })
    .max(255, { error: 'external_id must be at most 255 characters' })
    .refine((id) => !hasLoneSurrogate(id), { error: LONE_SURROGATE }),
});
export type RecordKey = z.infer<typeof RecordKey>;

/**
 * The stable string form used in Redis keys and job ids: `kind|source|external_id`, the external
 * id percent-encoded so no '|' (or ':', which BullMQ forbids in job ids) can appear inside it and
 * no two records can share a string.
 */
export function recordKeyString(key: RecordKey): string {
  return `${key.kind}|${key.source}|${keyPart(key.external_id, 'external_id')}`;
}

export function parseRecordKeyString(text: string): RecordKey {
  const [kind, source, encoded, ...rest] = text.split('|');
  if (rest.length > 0 || encoded === undefined) throw new Error(`not a record key string: ${text}`);
  return RecordKey.parse({ kind, source, external_id: decodeURIComponent(encoded) });
}

/**
 * The external id of a refund in the tax engine. Platforms number refunds and orders in the same
 * space (Shopify order 1001 and refund 1001 can both exist), so refunds carry a prefix that no
 * invoice id uses (docs/events.md, "External ids").
 */
export const REFUND_ID_PREFIX = 'refund-';
export function refundExternalId(platformRefundId: string): string {
  return `${REFUND_ID_PREFIX}${platformRefundId}`;
}
