import type { Dice } from './dice.js';
import { decimalMapFor, decimalsFor, extrasFor, isObject, nullsFor, varyAddress, type Json } from './shape.js';

/**
 * The tax engine's answers with the variety of a real service (docs/emulator.md, "Variety"). Each
 * function takes the canonical answer and the record's dice and returns a varied copy; amounts,
 * ids, keys and statuses keep their values.
 */

const CUSTOMER_OPTIONAL = ['name', 'email', 'addresses', 'tax_number', 'customer_type', 'customer_status', 'comment', 'external_created_at', 'external_updated_at'];

export function varyCustomer(canonical: object, dice: Dice): Json {
  const out = structuredClone(canonical) as Json;
  nullsFor(out, CUSTOMER_OPTIONAL, dice);
  if (isObject(out.addresses)) {
    const addresses = out.addresses;
    for (const kind of ['billing', 'shipping']) if (kind in addresses) addresses[kind] = varyAddress(addresses[kind], dice);
    nullsFor(addresses, ['billing', 'shipping'], dice);
  }
  extrasFor(out, { object: 'customer', livemode: false, metadata: {}, _links: { self: { href: `/v1/customers/${String(out.id)}` } } }, dice);
  return out;
}

export function varyExemption(canonical: object, dice: Dice): Json {
  const out = structuredClone(canonical) as Json;
  nullsFor(out, ['certificate_id'], dice);
  extrasFor(out, { object: 'exemption', metadata: {}, certificate_status: out.certificate_id === undefined ? null : 'on_file' }, dice);
  return out;
}

/** Reasons a later version of the service gives instead of the listed ones, with the same meaning. */
function laterReason(reason: unknown, item: Json, customerType: string | undefined): unknown {
  if (reason === 'product_exempt') return item.tangible_category === 'intangible' ? 'digital_service_exempt' : 'product_category_exempt';
  if (reason === 'not_collecting') return 'no_nexus';
  if (reason === 'customer_exempt') return 'exemption_certificate';
  if (reason === 'not_subject_to_tax') return 'out_of_scope';
  if (reason === 'standard_rated' && customerType === 'marketplace') return 'marketplace_facilitator';
  return reason;
}

const ITEM_DECIMALS = ['unit_price', 'quantity', 'discount', 'manual_sales_tax_rate', 'total_price', 'total_price_after_discount', 'relative_transaction_discount'];
const SUMMARY_DECIMALS = ['total_tax', 'effective_tax_rate'];
const BREAKDOWN_DECIMALS = ['gross_sales', 'taxable_amount', 'non_taxable_amount', 'tax_rate', 'tax_due'];
const AMOUNT_DECIMALS = [
  'total_items_amount',
  'taxable_items_amount',
  'tangible_items_amount',
  'non_taxable_amount',
  'final_transaction_amount',
  'total_discount',
  'transaction_level_discount',
];

function varyBreakdown(breakdown: unknown, dice: Dice, path: string): void {
  if (!isObject(breakdown)) return;
  for (const [level, entry] of Object.entries(breakdown)) {
    if (!isObject(entry)) continue;
    decimalsFor(entry, BREAKDOWN_DECIMALS, dice, `${path}.${level}`);
    const name = typeof entry.jurisdiction_name === 'string' ? entry.jurisdiction_name : level;
    extrasFor(entry, { jurisdiction_code: `${level.toUpperCase()}-${name.replace(/\W+/g, '_').toUpperCase()}`, reporting_code: null }, dice);
  }
}

/** A line that carries no tax because it is exempt or not taxable: its breakdown may be left out. */
const untaxed = (line: Json) => line.is_exempt === true || line.taxable_category === 'not_taxable';

function varyLine(line: Json, dice: Dice, path: string, customerType: string | undefined): void {
  decimalsFor(line, ITEM_DECIMALS, dice, path);
  decimalMapFor(line.manual_sales_tax_rates, dice, `${path}.manual_sales_tax_rates`);
  if (isObject(line.tax)) decimalsFor(line.tax, SUMMARY_DECIMALS, dice, `${path}.tax`);
  if (dice.on('omissions') && untaxed(line)) delete line.jurisdiction_tax_breakdown;
  varyBreakdown(line.jurisdiction_tax_breakdown, dice, `${path}.breakdown`);
  varyBreakdown(line.manual_jurisdiction_tax_breakdown, dice, `${path}.manual`);
  if (dice.on('enums')) {
    const wasNotTaxable = line.taxable_category === 'not_taxable';
    const exemptReason = line.taxability_reason === 'product_exempt' || line.taxability_reason === 'customer_exempt';
    line.taxability_reason = laterReason(line.taxability_reason, line, customerType);
    if (line.tangible_category === 'intangible') line.tangible_category = 'digital';
    if (wasNotTaxable && exemptReason) line.taxable_category = 'exempt';
  }
}

export interface TransactionContext {
  /** The customer's own dice, so an inline customer looks as it does on its own. */
  customerDice?: Dice;
  /** customer_type of the transaction's customer (a marketplace gets marketplace_facilitator). */
  customerType?: string;
}

export function varyTransaction(canonical: object, dice: Dice, context: TransactionContext = {}): Json {
  const out = structuredClone(canonical) as Json;
  nullsFor(out, ['transaction_date', 'document_name', 'transaction_level_discount', 'external_created_at', 'external_updated_at', 'refund_info', 'addresses', 'customer_details'], dice);
  decimalsFor(out, ['transaction_level_discount'], dice, 'transaction');

  if (isObject(out.currency_details)) {
    const currency = out.currency_details;
    nullsFor(currency, ['manual_exchange_rate'], dice);
    decimalsFor(currency, ['manual_exchange_rate'], dice, 'currency_details');
    if (dice.on('omissions') && currency.exchange_rate_info === null) delete currency.exchange_rate_info;
  }
  if (isObject(out.refund_info)) decimalsFor(out.refund_info, ['refund_linked_percentage'], dice, 'refund_info');

  if (isObject(out.addresses)) {
    const addresses = out.addresses;
    for (const kind of ['billing', 'shipping', 'shipping_from', 'supplier']) if (kind in addresses) addresses[kind] = varyAddress(addresses[kind], dice);
    const shipping = addresses.shipping;
    if (isObject(shipping) && isObject(shipping.matched_address)) {
      // Geocoding may not have run; `max` keeps the result so its own variations show.
      if (dice.on('omissions') && dice.pick('matched_address', ['omit', 'keep'] as const) === 'omit') delete shipping.matched_address;
      else shipping.matched_address = varyMatchedAddress(shipping.matched_address, dice);
    }
  }

  if (isObject(out.customer_details)) {
    const details = out.customer_details;
    if (dice.on('nulls') && !('customer_type_override' in details)) details.customer_type_override = null;
    if (isObject(details.customer)) details.customer = varyCustomer(details.customer, context.customerDice ?? dice);
  }

  if (Array.isArray(out.items)) {
    out.items.forEach((item: unknown, i: number) => {
      if (!isObject(item)) return;
      nullsFor(item, ['name', 'description', 'tax_code', 'discount', 'exemption_id', 'exemption_reason'], dice);
      varyLine(item, dice, `items[${i}]`, context.customerType);
      extrasFor(item, { object: 'line_item', metadata: {}, line_number: i + 1 }, dice);
    });
  }
  if (isObject(out.shipping_fee)) {
    decimalsFor(out.shipping_fee, ['amount'], dice, 'shipping_fee');
    varyLine(out.shipping_fee, dice, 'shipping_fee', context.customerType);
    extrasFor(out.shipping_fee, { object: 'shipping_fee' }, dice);
  }
  if (isObject(out.tax)) {
    decimalsFor(out.tax, SUMMARY_DECIMALS, dice, 'tax');
    extrasFor(out.tax, { calculation_version: '2025.1' }, dice);
  }
  if (isObject(out.amounts)) decimalsFor(out.amounts, AMOUNT_DECIMALS, dice, 'amounts');
  extrasFor(out, { object: 'transaction', livemode: false, metadata: {}, _links: { self: { href: `/v1/transactions/${String(out.id)}` } } }, dice);
  return out;
}

/** Geocoding results: numbers as JSON numbers, finer match levels, no state outside the US. */
export function varyMatchedAddress(canonical: Json, dice: Dice): Json {
  const out: Json = { ...canonical };
  if (dice.on('numbers')) {
    for (const field of ['latitude', 'longitude', 'confidence']) if (typeof out[field] === 'string') out[field] = Number(out[field]);
  }
  if (dice.on('enums')) {
    if (out.match_level === 'street') out.match_level = 'rooftop';
    else if (out.match_level === 'zip') out.match_level = 'postal_code';
  }
  out.address = varyAddress(out.address, dice);
  extrasFor(out, { provider: 'emulator-geocoder', timezone: null }, dice);
  return out;
}

/** A cursor page with each record varied by its own dice, plus fields of a later list format. */
export function varyPage(page: { data: unknown[]; cursors: object }, dice: Dice, path: string): Json {
  const out: Json = { data: page.data, cursors: { ...page.cursors } };
  extrasFor(out, { object: 'list', url: path }, dice);
  if (isObject(out.cursors)) extrasFor(out.cursors, { total_count: null }, dice);
  return out;
}

/** Token answers: the usual OAuth extras. */
export function varyToken(canonical: object, dice: Dice): Json {
  const out = { ...canonical } as Json;
  extrasFor(out, { scope: 'tax vat registrations filings', not_before_policy: 0 }, dice);
  return out;
}
