/**
 * Tax engine contract (spec/tax-calculation-api.md), in the document's order: tokens (tax-auth.ts),
 * customers and exemptions (tax-customers.ts), transactions (tax-transactions.ts), lists (here).
 * Requests are strict (unknown keys rejected): taxsync is strict in what it sends. The response
 * schemas here (`*Contract`, the token and verify answers) describe the answers as documented;
 * they are never used to refuse an answer, only to detect drift (src/api/drift.ts). What taxsync
 * reads from each answer is in tax-answers.ts (docs/decisions.md, "Reading answers").
 *
 * Decisions where the spec says "not shown" (copy to docs/decisions.md):
 * - Token request bodies: variant A is the form {grant_type, client_id, client_secret}; variant B
 *   is taken to be JSON {client_id, client_secret}.
 * - Token responses as documented: access_token, token_type, expires_in (variant B also expire_at).
 *   What the client needs of them (only access_token is essential) is TokenAnswer's, tax-answers.ts.
 * - Verify: a loose object of JWT claims; the registered numeric claims are checked when present.
 * - Address: no field is required; country must look like a country code.
 * - Customer: only source and external_id are required in the upsert body; customer_status is a
 *   free string.
 * - Exemption request: customer_id, country, start_date and exemption_type are required; the
 *   same body serves POST and PUT.
 * - Exemption list: the shape is not shown; the cursor page and a bare array are both accepted.
 *   The list query (limit/after/before) is assumed to be the same as for customers.
 * - Transaction request: only source, external_id and each item's unit_price are required (plus
 *   currency inside currency_details and is_refund_linked inside refund_info when those objects
 *   are sent). transaction_type is any lowercase identifier; invoice and refund are the known ones.
 * - shipping_fee: its fields are not shown. taxsync sends {amount, tax_code?} (amount a decimal
 *   string, before tax, after any shipping discount) — ShippingFeeRequest below is the one place
 *   to change it; a response may carry any object or null.
 * - customer_details.customer (inline) accepts exactly the five listed fields.
 * - customer_type_override (response) uses the customer_type values.
 * - Breakdown maps are keyed by any string (state, county, city, mta, spd for automatic lookup;
 *   whatever keys were submitted for manual rates).
 * - matched_address latitude, longitude and confidence: number or decimal string (not money).
 * - exchange_rate_info: fields not shown; an opaque object or null.
 * - Response transaction_type is any string (only invoice and refund are known); taxability_reason
 *   and match_level are the listed values, so a value added later shows as drift.
 * - Errors and DELETE bodies are not shown: no schema; the client keeps the raw body.
 */
import { z } from 'zod';
import { CustomerContract, ExemptionContract } from './tax-customers.js';
import { TransactionContract } from './tax-transactions.js';

export * from './tax-auth.js';
export * from './tax-customers.js';
export * from './tax-transactions.js';

// ---------------------------------------------------------------------------------------------
// Lists

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;

/** Query of the list endpoints; `limit` is coerced so query-string input parses too. */
export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).optional(),
  after: z.string().min(1).optional(),
  before: z.string().min(1).optional(),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** Cursor block of a page: send `after` to page forward, `before` to page back. */
export const Cursors = z.object({
  after: z.string().nullable(),
  before: z.string().nullable(),
  has_next: z.boolean(),
  has_previous: z.boolean(),
  limit: z.number().int(),
});
export type Cursors = z.infer<typeof Cursors>;

/** A cursor page `{data, cursors}` of the given records. */
export function cursorPage<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), cursors: Cursors });
}
export type CursorPage<T> = { data: T[]; cursors: Cursors };

export const CustomerPageContract = cursorPage(CustomerContract);
export const TransactionPageContract = cursorPage(TransactionContract);

/** `GET /v1/exemptions/`: shape not shown, so a cursor page or a bare array. */
export const ExemptionListContract = z.union([cursorPage(ExemptionContract), z.array(ExemptionContract)]);
