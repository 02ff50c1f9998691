/**
 * What taxsync reads from each tax engine answer, and nothing more (docs/decisions.md, "Reading
 * answers"). Only the `id` of a record (and a token's access_token) is essential: without it the
 * answer is unreadable. Every other field listed is read when it is readable and taken as absent
 * otherwise; fields not listed pass through as received and are only compared with the contract
 * (tax-engine.ts) by the drift detector. Add a field here when taxsync starts using it.
 */
import { z } from 'zod';
import { AnswerBoolean, AnswerDecimal, AnswerId, IsoDateTime, lenient, openEnum, readableItems, reads, type Read } from './common.js';
import {
  CUSTOMER_TYPES,
  EXEMPTION_STATUSES,
  EXEMPTION_TYPES,
  type CustomerContract,
  type Cursors,
  type ExemptionContract,
  type TransactionContract,
  type VerifyClaimsContract,
} from './tax-engine.js';

// ---------------------------------------------------------------------------------------------
// Tokens

/**
 * Both token variants. token_type is checked where it is read (src/api/token.ts): absent is read
 * as Bearer, another scheme is refused, since the token would be sent in a scheme not its own.
 */
export const TokenAnswer = reads({
  access_token: z.string().min(1),
  token_type: lenient(z.string()),
  /** Lifetime in seconds; also as a digit string. */
  expires_in: lenient(z.union([z.number().nonnegative(), z.string().trim().regex(/^\d+$/).transform(Number)])),
  expire_at: lenient(IsoDateTime),
});
export type TokenAnswer = z.infer<typeof TokenAnswer>;

/** `POST /v1/auth/verify`: the claims, as received; the registered numeric ones when readable. */
export const VerifyClaimsAnswer = reads({
  exp: lenient(z.number()),
  iat: lenient(z.number()),
  nbf: lenient(z.number()),
});
export type VerifyClaims = Read<z.infer<typeof VerifyClaimsAnswer>, VerifyClaimsContract>;

// ---------------------------------------------------------------------------------------------
// Records

/** A customer: its id (the exemption processor and the record's state); name and type for the demo. */
export const CustomerAnswer = reads({
  id: AnswerId,
  name: lenient(z.string()),
  customer_type: lenient(openEnum(CUSTOMER_TYPES)),
  /** The key and the service's own times: `taxsync reconcile` matches list pages with its records. */
  source: lenient(z.string()),
  external_id: lenient(z.string()),
  created_at: lenient(IsoDateTime),
  updated_at: lenient(IsoDateTime),
});
export type Customer = Read<z.infer<typeof CustomerAnswer>, CustomerContract>;

/**
 * An exemption: its id (kept in the record's state to update it), and the fields a create whose
 * answer was lost is recognised by (src/processors/exemption.ts) and the demo shows.
 */
export const ExemptionAnswer = reads({
  id: AnswerId,
  customer_id: lenient(z.string()),
  country: lenient(z.string()),
  jurisdictions: lenient(z.array(z.string())),
  start_date: lenient(z.string()),
  end_date: lenient(z.string().nullable()),
  certificate_id: lenient(z.string()),
  exemption_type: lenient(openEnum(EXEMPTION_TYPES)),
  exemption_status: lenient(openEnum(EXEMPTION_STATUSES)),
});
export type Exemption = Read<z.infer<typeof ExemptionAnswer>, ExemptionContract>;

/**
 * A transaction: its id (a linked refund's created_from), and what a refund's share is computed
 * from when taxsync lacks the canonical invoice (amounts, is_tax_inclusive, tax.total_tax); the
 * rest for trace lines and the demo.
 */
export const TransactionAnswer = reads({
  id: AnswerId,
  transaction_type: lenient(z.string()),
  // A share computed as tax-exclusive from a tax-inclusive invoice would be too small: "true" is read.
  is_tax_inclusive: lenient(AnswerBoolean),
  created_from: lenient(z.string().nullable()),
  currency_details: lenient(reads({ currency: lenient(z.string()) })),
  refund_info: lenient(reads({ is_refund_linked: lenient(z.boolean()), refund_linked_percentage: lenient(AnswerDecimal) })),
  tax: lenient(reads({ total_tax: lenient(AnswerDecimal) })),
  amounts: lenient(reads({ final_transaction_amount: lenient(AnswerDecimal), total_items_amount: lenient(AnswerDecimal) })),
  // The key and state `taxsync reconcile` matches list pages by (its items are read in src/reconcile/facts.ts).
  source: lenient(z.string()),
  external_id: lenient(z.string()),
  transaction_status: lenient(z.string()),
  created_at: lenient(IsoDateTime),
  updated_at: lenient(IsoDateTime),
});
export type Transaction = Read<z.infer<typeof TransactionAnswer>, TransactionContract>;

// ---------------------------------------------------------------------------------------------
// Lists

/** The cursors of a page; absent or unreadable, the page is the last one. */
export const CursorsAnswer = reads({
  after: lenient(z.string().nullable()),
  before: lenient(z.string().nullable()),
  has_next: lenient(z.boolean()),
  has_previous: lenient(z.boolean()),
});
export type PageCursors = Read<z.infer<typeof CursorsAnswer>, Partial<Cursors>>;

/** A cursor page `{data, cursors}`; records without a readable id are left out. */
export function cursorPageAnswer<T extends z.ZodType>(item: T) {
  return reads({ data: readableItems(item), cursors: CursorsAnswer.nullable().catch(null) });
}

export const CustomerPageAnswer = cursorPageAnswer(CustomerAnswer);
export const TransactionPageAnswer = cursorPageAnswer(TransactionAnswer);

/** `GET /v1/exemptions/`: a cursor page, or a bare array read as one page without cursors. */
export const ExemptionListAnswer = z.union([
  readableItems(ExemptionAnswer).transform((data) => ({ data, cursors: null })),
  cursorPageAnswer(ExemptionAnswer),
]);
