import { CustomerRequest, type CustomerType } from '../api/schemas/tax-engine.js';
import type { CustomerData, InvoiceCustomer } from '../domain/events.js';
import { addressOut } from './common.js';
import { checked, wrongKind, type MapResult, type MappingContext } from './result.js';
import type { MappingSettings } from './settings.js';

/** The source's type when it states one; else its tax-exempt flag; else retail. */
export function customerType(data: Pick<CustomerData, 'customer_type' | 'tax_exempt'>): CustomerType {
  if (data.customer_type !== undefined) return data.customer_type;
  return data.tax_exempt === true ? 'retail_exempt' : 'retail';
}

/** The configured mapping of the source's status, else the status itself; undefined omits it. */
export function customerStatus(status: string | undefined, settings: MappingSettings): string | undefined {
  if (status === undefined || status === '') return undefined;
  if (Object.hasOwn(settings.customer_status, status)) return settings.customer_status[status] ?? undefined;
  return status;
}

/** customer.upserted → body of `PUT /v1/customers/`. */
export function mapCustomer(data: CustomerData, ctx: MappingContext): MapResult<CustomerRequest> {
  const what = `customer ${ctx.key.external_id}`;
  const kind = wrongKind(ctx.key, 'customer', what);
  if (kind !== undefined) return kind;

  const billing = addressOut(data.addresses?.billing);
  const shipping = addressOut(data.addresses?.shipping);
  const status = customerStatus(data.status, ctx.settings);
  const body = {
    source: ctx.key.source,
    external_id: ctx.key.external_id,
    ...(data.name === undefined ? {} : { name: data.name }),
    ...(data.email === undefined ? {} : { email: data.email }),
    ...(billing === undefined && shipping === undefined
      ? {}
      : { addresses: { ...(billing === undefined ? {} : { billing }), ...(shipping === undefined ? {} : { shipping }) } }),
    ...(data.tax_number === undefined || data.tax_number === '' ? {} : { tax_number: data.tax_number }),
    customer_type: customerType(data),
    ...(status === undefined ? {} : { customer_status: status }),
    ...(data.created_at === undefined ? {} : { external_created_at: data.created_at }),
    ...(data.updated_at === undefined ? {} : { external_updated_at: data.updated_at }),
  };
  const result = checked(CustomerRequest, body, what);
  return result.ok ? { kind: 'send', body: result.body } : result.result;
}

export interface InvoiceCustomerContext extends MappingContext {
  /** The customer's own data taxsync last applied (its customer.upserted), when older than the invoice. */
  known?: CustomerData;
}

/**
 * The facts of an invoice's customer that the inline `customer_details.customer` cannot carry
 * (it takes only external_id, source, name and the two timestamps): a tax-exempt flag, a customer
 * type, a tax number, addresses. They decide how the invoice is taxed, so the processor upserts
 * them (`PUT /v1/customers/`) before the transaction. Laid over `known` (the customer's own older
 * record), so a fact the invoice does not state is not cleared. `ignore` when the invoice's
 * customer states none of them: the inline customer says it all.
 */
export function mapInvoiceCustomer(customer: InvoiceCustomer, ctx: InvoiceCustomerContext): MapResult<CustomerRequest> {
  const { external_id: _id, ...facts } = customer;
  if (!hasTaxFacts(facts)) {
    return { kind: 'ignore', reason: `customer ${customer.external_id} of the invoice states no facts beyond the inline customer's` };
  }
  const stated = Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined)) as CustomerData;
  return mapCustomer({ ...ctx.known, ...stated }, ctx);
}

function hasTaxFacts(data: CustomerData): boolean {
  return (
    data.tax_exempt !== undefined ||
    data.customer_type !== undefined ||
    (data.tax_number !== undefined && data.tax_number !== '') ||
    addressOut(data.addresses?.billing) !== undefined ||
    addressOut(data.addresses?.shipping) !== undefined
  );
}

/** A version of a customer's facts and its time (epoch ms): the customer's own event, or an invoice's. */
export interface DatedFacts<T> {
  data: T;
  atMs: number;
}

/**
 * The body a customer's writer sends (docs/mapping.md, "Customer facts before the invoice"): the
 * customer's own data, with the newest facts an invoice stated laid over it when they are as new
 * as it or newer (a tie goes to the invoice, which states them explicitly). The customer's own job
 * and every invoice's job decide with this one rule, so whichever writes last writes the same,
 * newest facts. `ignore` when there is nothing to send.
 */
export function mapCustomerFacts(
  own: DatedFacts<CustomerData> | undefined,
  facts: DatedFacts<InvoiceCustomer> | undefined,
  ctx: MappingContext,
): MapResult<CustomerRequest> {
  if (facts !== undefined && (own === undefined || facts.atMs >= own.atMs)) {
    const laid = mapInvoiceCustomer(facts.data, { ...ctx, ...(own ? { known: own.data } : {}) });
    if (laid.kind !== 'ignore') return laid;
  }
  if (own !== undefined) return mapCustomer(own.data, ctx);
  return { kind: 'ignore', reason: `customer ${ctx.key.external_id} has no facts to send` };
}
