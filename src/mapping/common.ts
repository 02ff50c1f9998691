import type {
  AddressRequest,
  CustomerDetailsRequest,
  TransactionAddressesRequest,
  TransactionItemRequest,
} from '../api/schemas/tax-engine.js';
import type { Address, InvoiceCustomer, Line } from '../domain/events.js';
import { Money, formatDecimal, formatMoney, isoExponent, roundMoney, type Decimal } from '../domain/money.js';
import type { Problems } from './result.js';
import type { MappingSettings } from './settings.js';

/** Shared pieces of the transaction mappers: addresses, the inline customer, line items. */

export const ZERO = new Money(0);

const ADDRESS_FIELDS = ['street', 'city', 'state', 'zip', 'country'] as const;

/** Only the fields present (an empty string counts as absent); undefined when none is. */
export function addressOut(address: Address | undefined): AddressRequest | undefined {
  if (address === undefined) return undefined;
  const out: AddressRequest = {};
  for (const field of ADDRESS_FIELDS) {
    const value = address[field];
    if (value !== undefined && value !== '') out[field] = value;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** billing and shipping from the document, shipping_from from the settings; undefined when empty. */
export function transactionAddresses(
  addresses: { billing?: Address; shipping?: Address } | undefined,
  settings: MappingSettings,
): TransactionAddressesRequest | undefined {
  const billing = addressOut(addresses?.billing);
  const shipping = addressOut(addresses?.shipping);
  const from = addressOut(settings.shipping_from);
  const out: TransactionAddressesRequest = {
    ...(billing === undefined ? {} : { billing }),
    ...(shipping === undefined ? {} : { shipping }),
    ...(from === undefined ? {} : { shipping_from: from }),
  };
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * customer_details with the inline customer, upserted by the engine with the transaction, so
 * customers and invoices need no ordering. Its source is the record's source (invariant 3).
 */
export function inlineCustomer(customer: InvoiceCustomer, source: string): CustomerDetailsRequest {
  return {
    customer: {
      external_id: customer.external_id,
      source,
      ...(customer.name === undefined ? {} : { name: customer.name }),
      ...(customer.created_at === undefined ? {} : { external_created_at: customer.created_at }),
      ...(customer.updated_at === undefined ? {} : { external_updated_at: customer.updated_at }),
    },
  };
}

/** SKU setting, then product setting, then the source's own code, then the default. */
export function taxCodeFor(line: Line, settings: MappingSettings): string | undefined {
  const codes = settings.tax_codes;
  return (
    (line.sku === undefined ? undefined : codes.by_sku[line.sku]) ??
    (line.product_id === undefined ? undefined : codes.by_product[line.product_id]) ??
    (line.tax_code === undefined || line.tax_code === '' ? undefined : line.tax_code) ??
    codes.default
  );
}

/** A configured manual rate: SKU, then product. */
export function manualRateFor(line: Line, settings: MappingSettings): string | undefined {
  const rates = settings.manual_rates;
  return (
    (line.sku === undefined ? undefined : rates.by_sku[line.sku]) ??
    (line.product_id === undefined ? undefined : rates.by_product[line.product_id])
  );
}

/**
 * The manual rate of a line that is not a taxable supply (a donation, a gift card sold): the spec's
 * single override rate, so the engine computes no tax on the line whatever its location or product
 * rules say (docs/decisions.md, "Non-taxable lines"). It wins over a configured manual rate.
 */
export const NOT_TAXABLE_RATE = '0';

/** The items and the amount a transaction-level discount can be spread over. */
export interface MappedLines {
  items: TransactionItemRequest[];
  /** Σ of the positive line amounts after their discounts (the engine's pro-rata weights). */
  discountable: Decimal;
}

/**
 * Canonical lines → items, one per line in the same order (items[i] is lines[i], so a field error
 * names the line the source sent). Amounts are exact decimal strings; nothing is rounded. A
 * negative quantity is turned into a negative unit price (the same line amount), since the engine
 * takes credit lines as a negative unit_price. Amount rules the engine enforces are checked here so
 * no call is made with them broken: a line's amount is unit_price × quantity rounded half-up to the
 * currency's minor unit, as the engine computes it.
 */
export function mapLines(lines: readonly Line[], settings: MappingSettings, currency: string, problems: Problems): MappedLines {
  const scale = isoExponent(currency);
  let discountable = ZERO;
  const items = lines.map((line, i): TransactionItemRequest => {
    const flip = line.quantity.isNegative() && !line.quantity.isZero();
    const unitPrice = flip ? line.unit_price.negated() : line.unit_price;
    const quantity = flip ? line.quantity.negated() : line.quantity;
    const amount = roundMoney(unitPrice.times(quantity), scale);
    const discount = line.discount ?? ZERO;
    const field = `items[${i}].discount`;
    if (discount.isNegative() && !discount.isZero()) problems.add(field, `must not be negative (got ${formatDecimal(discount)})`);
    else if (amount.greaterThan(ZERO) && discount.greaterThan(amount)) {
      problems.add(field, `${formatDecimal(discount)} exceeds the line amount ${formatMoney(amount, scale)}`);
    } else if (!amount.greaterThan(ZERO) && !discount.isZero()) {
      problems.add(field, `a discount needs a line with a positive amount (this line's amount is ${formatMoney(amount, scale)})`);
    }
    if (amount.greaterThan(ZERO)) discountable = discountable.plus(amount.minus(discount));

    const name = line.name ?? line.sku;
    const taxCode = taxCodeFor(line, settings);
    const rate = line.taxable === false ? NOT_TAXABLE_RATE : manualRateFor(line, settings);
    return {
      ...(name === undefined ? {} : { name }),
      ...(line.description === undefined ? {} : { description: line.description }),
      ...(taxCode === undefined ? {} : { tax_code: taxCode }),
      unit_price: formatDecimal(unitPrice),
      quantity: formatDecimal(quantity),
      ...(discount.isZero() ? {} : { discount: formatDecimal(discount) }),
      ...(rate === undefined ? {} : { manual_sales_tax_rate: rate }),
    };
  });
  return { items, discountable };
}

/** Checks a transaction-level discount the way the engine spreads it (calculate.ts). */
export function checkTransactionDiscount(discount: Decimal, discountable: Decimal, currency: string, problems: Problems): void {
  const scale = isoExponent(currency);
  const field = 'transaction_level_discount';
  if (discount.isNegative() && !discount.isZero()) problems.add(field, `must not be negative (got ${formatDecimal(discount)})`);
  else if (discount.greaterThan(discountable)) {
    problems.add(field, `${formatDecimal(discount)} exceeds the items' amount after their discounts (${formatMoney(discountable, scale)})`);
  } else if (discount.decimalPlaces() > scale) {
    problems.add(field, `${formatDecimal(discount)} has more decimals than ${currency} allows (${scale}); taxsync does not round discounts`);
  }
}

/** An exchange rate must be positive. */
export function checkExchangeRate(rate: Decimal | undefined, problems: Problems): void {
  if (rate !== undefined && !rate.greaterThan(ZERO)) {
    problems.add('currency_details.manual_exchange_rate', `must be positive (got ${formatDecimal(rate)})`);
  }
}
