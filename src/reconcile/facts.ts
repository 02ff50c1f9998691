import { z } from 'zod';
import { AnswerDecimal, type Customer, type Transaction } from '../api/schemas/index.js';

/**
 * PURE: what `taxsync reconcile` keeps of each record of the tax engine's lists — the fields it
 * compares, as plain decimal strings — so a run can hold them in Redis between pages (a resumed
 * run reads them back through the same schema) instead of the whole answers.
 */

const Dec = AnswerDecimal.nullable().optional().catch(undefined);

/** One item as the engine answers it: only the request fields reconcile compares. */
const EngineItemAnswer = z.looseObject({ unit_price: Dec, quantity: Dec, discount: Dec });

/** The parts of a transaction answer read here beyond tax-answers.ts (which keeps them untyped). */
const TransactionExtras = z.looseObject({
  items: z.array(z.unknown()).nullable().optional().catch(undefined),
  shipping_fee: z.looseObject({ amount: Dec }).nullable().optional().catch(undefined),
  transaction_level_discount: Dec,
});

export const EngineItem = z.object({ unit_price: z.string().optional(), quantity: z.string().optional(), discount: z.string().optional() });
export type EngineItem = z.infer<typeof EngineItem>;

export const EngineTransaction = z.object({
  id: z.string(),
  source: z.string(),
  external_id: z.string(),
  transaction_type: z.string().optional(),
  transaction_status: z.string().optional(),
  currency: z.string().optional(),
  created_from: z.string().optional(),
  is_refund_linked: z.boolean().optional(),
  refund_linked_percentage: z.string().optional(),
  /** Undefined: the answer carried no readable items list. */
  items: z.array(EngineItem).optional(),
  shipping_fee: z.string().optional(),
  transaction_level_discount: z.string().optional(),
  total_tax: z.string().optional(),
  /** The service's own time of the last write (else of the creation), for `--since`. */
  updated_at: z.string().optional(),
});
export type EngineTransaction = z.infer<typeof EngineTransaction>;

export const EngineCustomer = z.object({
  id: z.string(),
  source: z.string(),
  external_id: z.string(),
  customer_type: z.string().optional(),
  updated_at: z.string().optional(),
});
export type EngineCustomer = z.infer<typeof EngineCustomer>;

const defined = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;

/** The facts of one list entry; undefined when it carries no readable key (it cannot be matched). */
export function transactionFacts(answer: Transaction): EngineTransaction | undefined {
  if (!answer.source || !answer.external_id) return undefined;
  const extras = TransactionExtras.safeParse(answer);
  const rest = extras.success ? extras.data : { items: undefined, shipping_fee: undefined, transaction_level_discount: undefined };
  const items = rest.items?.map((raw) => {
    const item = EngineItemAnswer.safeParse(raw);
    return item.success ? defined({ unit_price: item.data.unit_price ?? undefined, quantity: item.data.quantity ?? undefined, discount: item.data.discount ?? undefined }) : {};
  });
  return defined({
    id: answer.id,
    source: answer.source,
    external_id: answer.external_id,
    transaction_type: answer.transaction_type,
    transaction_status: answer.transaction_status,
    currency: answer.currency_details?.currency,
    created_from: answer.created_from ?? undefined,
    is_refund_linked: answer.refund_info?.is_refund_linked,
    refund_linked_percentage: answer.refund_info?.refund_linked_percentage,
    items,
    shipping_fee: rest.shipping_fee?.amount ?? undefined,
    transaction_level_discount: rest.transaction_level_discount ?? undefined,
    total_tax: answer.tax?.total_tax,
    updated_at: answer.updated_at ?? answer.created_at,
  });
}

export function customerFacts(answer: Customer): EngineCustomer | undefined {
  if (!answer.source || !answer.external_id) return undefined;
  return defined({
    id: answer.id,
    source: answer.source,
    external_id: answer.external_id,
    customer_type: answer.customer_type,
    updated_at: answer.updated_at ?? answer.created_at,
  });
}

/** The field a record is filed under in a run's engine index: `source|external_id` (URI-encoded id). */
export function engineField(source: string, externalId: string): string {
  return `${source}|${encodeURIComponent(externalId)}`;
}
