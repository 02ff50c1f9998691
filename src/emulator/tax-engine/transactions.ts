import { randomUUID } from 'node:crypto';
import { Dec, plain } from '../contract/decimal.js';
import { isCurrency } from '../contract/iso-4217.js';
import type { FieldErrors } from '../contract/primitives.js';
import { TransactionBody, withSources, type AddressBody } from '../contract/tax-requests.js';
import { created, errorAnswer, noContent, ok, type Answer, type RecordRef } from '../answer.js';
import { isoNow, today } from '../clock.js';
import { cursorPage, parsePageQuery } from '../paging.js';
import type { CustomerRecord, TransactionRecord } from '../state.js';
import { defineEndpoint, type RouteContext } from '../routing.js';
import { sourceKey, type Entry } from '../store.js';
import { calculate, type ExemptionEffect } from './calculate.js';
import { customerVarietyKey, keyFromBody, rejectPathUpserts, upsertInlineCustomer } from './customers.js';
import { customerExemption, exemptionApplies, type ExemptionScope } from './exemptions.js';
import { geocode, type MatchedAddress, type TaxLocation } from './geocode.js';
import { varyPage, varyTransaction } from '../variety/tax.js';
import { notFound, parseTaxBody } from './validation.js';


export const transactionRef = (source: string, externalId: string, id?: string): RecordRef => ({
  kind: 'transaction',
  key: `transaction:${sourceKey(source, externalId)}`,
  ...(id === undefined ? {} : { id }),
});

const refundFractionProblem = (value: string): string | undefined => {
  const fraction = new Dec(value);
  if (fraction.greaterThan(0) && fraction.lessThanOrEqualTo(1)) return undefined;
  const hint = fraction.greaterThan(1) ? `; ${value} looks like a percentage — send ${plain(fraction.dividedBy(100))}` : '';
  return `refund_linked_percentage must be a decimal fraction in (0, 1] (0.5 = 50%, 1.0 = full refund), not a percentage${hint}`;
};

type Resolved =
  | { ok: false; answer: Answer }
  | {
      ok: true;
      customer: CustomerRecord | undefined;
      original: TransactionRecord | undefined;
      itemExemptions: (ExemptionEffect | undefined)[];
      customerEffect: ExemptionEffect | undefined;
      location: TaxLocation | undefined;
      matched: MatchedAddress | undefined;
    };

export function registerTransactionRoutes(ctx: RouteContext): void {
  const { state, clock, settings, variety } = ctx;
  const schema = withSources(TransactionBody, settings.sources);
  const render = (t: TransactionRecord) => {
    const customerId = (t.customer_details as { customer_id?: string } | undefined)?.customer_id;
    const customer = customerId === undefined ? undefined : state.customers.getAny(customerId)?.value;
    return varyTransaction(t, variety.dice(`transaction:${sourceKey(t.source, t.external_id)}`), {
      ...(customer === undefined ? {} : { customerDice: variety.dice(customerVarietyKey(customer)), customerType: customer.customer_type }),
    });
  };
  const byId = (id: string | undefined) => (id === undefined ? undefined : state.transactions.get(id));
  const byKey = (p: Record<string, string>) => state.transactions.getByKey(sourceKey(p.source ?? '', p.external_id ?? ''));
  const refOf = (e: Entry<TransactionRecord> | undefined) => (e === undefined ? undefined : transactionRef(e.value.source, e.value.external_id, e.id));
  const keyNotFound = (p: Record<string, string>) => notFound(`transaction with source ${p.source} and external_id ${p.external_id}`);

  defineEndpoint(ctx, 'transactions.list', (req) => {
    const query = parsePageQuery(req.query);
    if (!query.ok) return errorAnswer(400, 'invalid list query', query.fields);
    return ok(varyPage(cursorPage(state.transactions.live(), query.query, render), variety.dice('list:transactions'), '/v1/transactions/'));
  });

  defineEndpoint(ctx, 'transactions.upsert', (req) => upsertTransaction(req.body), {
    record: (req) => keyFromBody(req.body, transactionRef),
  });

  defineEndpoint(ctx, 'transactions.get', (req) => {
    const entry = byId(req.params.id);
    return entry ? ok(render(entry.value)) : notFound(`transaction ${req.params.id}`);
  }, { record: (req) => refOf(byId(req.params.id)) });

  defineEndpoint(ctx, 'transactions.getByKey', (req) => {
    const entry = byKey(req.params);
    return entry ? ok(render(entry.value)) : keyNotFound(req.params);
  }, { record: (req) => transactionRef(req.params.source ?? '', req.params.external_id ?? '') });

  defineEndpoint(ctx, 'transactions.delete', (req) => {
    return req.params.id !== undefined && state.transactions.softDelete(req.params.id) ? noContent() : notFound(`transaction ${req.params.id}`);
  }, { record: (req) => refOf(byId(req.params.id)) });

  defineEndpoint(ctx, 'transactions.deleteByKey', (req) => {
    const entry = byKey(req.params);
    return entry !== undefined && state.transactions.softDelete(entry.id) ? noContent() : keyNotFound(req.params);
  }, { record: (req) => transactionRef(req.params.source ?? '', req.params.external_id ?? '') });

  rejectPathUpserts(ctx, 'transactions');

  function upsertTransaction(body: unknown): Answer {
    const parsed = parseTaxBody(schema, body, 'transaction');
    if (!parsed.ok) return parsed.answer;
    const tx = parsed.value;
    const invalid = semanticProblems(tx);
    if (Object.keys(invalid).length > 0) return errorAnswer(400, 'invalid transaction', invalid);

    const resolved = resolve(tx);
    if (!resolved.ok) return resolved.answer;
    const currency = tx.currency_details?.currency ?? 'USD';
    const original = tx.refund_info?.is_refund_linked === true ? resolved.original : undefined;
    const calc = calculate({
      currency,
      isTaxInclusive: tx.is_tax_inclusive ?? false,
      items: tx.items ?? [],
      transactionLevelDiscount: tx.transaction_level_discount,
      ...(tx.shipping_fee == null ? {} : { shipping: tx.shipping_fee }),
      location: resolved.location,
      overrideThreshold: tx.override_threshold ?? false,
      customerExemption: resolved.customerEffect,
      itemExemptions: resolved.itemExemptions,
      ...(original === undefined
        ? {}
        : { linkedRefund: { originalTotalTax: original.tax.total_tax, fraction: tx.refund_info?.refund_linked_percentage ?? '1' } }),
      table: settings.taxTable,
    });
    if (!calc.ok) return errorAnswer(400, 'invalid transaction', calc.fields);

    // Only now that everything is valid: the inline customer is written.
    const now = isoNow(clock);
    let customer = resolved.customer;
    const inline = tx.customer_details !== undefined && 'customer' in tx.customer_details ? tx.customer_details.customer : undefined;
    if (inline !== undefined) customer = upsertInlineCustomer(state, inline, now).value;

    const key = sourceKey(tx.source, tx.external_id);
    const existing = state.transactions.getByKey(key);
    const id = existing?.id ?? randomUUID();
    const { items: _items, shipping_fee: _shipping, addresses, customer_details: _details, currency_details, ...rest } = tx;
    const record: TransactionRecord = {
      ...rest,
      id,
      tenant_id: settings.tenantId,
      transaction_type: tx.transaction_type ?? 'invoice',
      transaction_status: tx.transaction_status ?? 'active',
      is_tax_inclusive: tx.is_tax_inclusive ?? false,
      override_threshold: tx.override_threshold ?? false,
      created_from: tx.created_from ?? null,
      created_at: existing?.value.created_at ?? now,
      updated_at: now,
      currency_details: {
        currency,
        ...(currency_details?.manual_exchange_rate === undefined ? {} : { manual_exchange_rate: currency_details.manual_exchange_rate }),
        exchange_rate_info: null,
      },
      ...(addresses === undefined ? {} : { addresses: responseAddresses(addresses, resolved.matched) }),
      ...(customer === undefined
        ? {}
        : {
            customer_details: {
              customer_id: customer.id,
              customer_external_id: customer.external_id,
              customer_source: customer.source,
              ...(inline === undefined ? {} : { customer }),
            },
          }),
      items: (tx.items ?? []).map((item, i) => ({ ...item, ...calc.result.items[i] })),
      shipping_fee: calc.result.shipping ?? null,
      tax: calc.result.tax,
      amounts: calc.result.amounts,
    };
    if (existing !== undefined) {
      existing.value = record;
      return { ...ok(render(record)), record: transactionRef(tx.source, tx.external_id, id) };
    }
    state.transactions.insert(id, record, key);
    return { ...created(render(record)), record: transactionRef(tx.source, tx.external_id, id) };
  }

  function semanticProblems(tx: TransactionBody): FieldErrors {
    const problems: FieldErrors = {};
    const add = (field: string, message: string) => (problems[field] ??= []).push(message);
    const currency = tx.currency_details?.currency;
    if (currency !== undefined && !isCurrency(currency)) add('currency_details.currency', `${currency} is not an ISO 4217 currency code`);
    const refund = tx.refund_info;
    if (refund?.is_refund_linked === true) {
      if (tx.transaction_type !== 'refund') add('refund_info.is_refund_linked', 'only a transaction_type "refund" can be a linked refund');
      if (tx.created_from === undefined || tx.created_from === null || tx.created_from === '') {
        add('created_from', 'a linked refund needs created_from: the id of the original transaction');
      }
      if (refund.refund_linked_percentage === undefined) {
        add('refund_info.refund_linked_percentage', 'a linked refund needs refund_linked_percentage: the decimal fraction refunded (0.5 = half)');
      }
    }
    if (refund?.refund_linked_percentage !== undefined) {
      const problem = refundFractionProblem(refund.refund_linked_percentage);
      if (problem) add('refund_info.refund_linked_percentage', problem);
    }
    return problems;
  }

  function resolve(tx: TransactionBody): Resolved {
    const missing: FieldErrors = {};
    const add = (field: string, message: string) => (missing[field] ??= []).push(message);

    let customer: CustomerRecord | undefined;
    const details = tx.customer_details;
    if (details !== undefined) {
      if ('customer_id' in details) {
        customer = state.customers.get(details.customer_id)?.value;
        if (customer === undefined) add('customer_details.customer_id', `no customer with id ${details.customer_id}`);
      } else if ('customer_external_id' in details) {
        customer = state.customers.getByKey(sourceKey(details.customer_source, details.customer_external_id))?.value;
        if (customer === undefined) {
          add('customer_details.customer_external_id', `no customer with source ${details.customer_source} and external_id ${details.customer_external_id}`);
        }
      } else {
        // Not written yet (see upsertTransaction); an existing one brings its type and exemptions.
        customer = state.customers.getByKey(sourceKey(details.customer.source, details.customer.external_id))?.value;
      }
    }

    let original: TransactionRecord | undefined;
    if (tx.refund_info?.is_refund_linked === true && typeof tx.created_from === 'string') {
      const found = state.transactions.getAny(tx.created_from);
      original = found?.deleted === false ? found.value : undefined;
      if (found === undefined) add('created_from', `no transaction with id ${tx.created_from}: a linked refund needs its original to exist first`);
      else if (found.deleted) add('created_from', `transaction ${tx.created_from} was deleted`);
      else if (found.value.transaction_type === 'refund') add('created_from', `transaction ${tx.created_from} is itself a refund; link the original invoice`);
      else {
        const ownKey = sourceKey(tx.source, tx.external_id);
        const others = state.transactions
          .live()
          .filter((e) => e.key !== ownKey && e.value.created_from === tx.created_from && e.value.refund_info?.is_refund_linked === true);
        const sum = others.reduce((acc, e) => acc.plus(e.value.refund_info?.refund_linked_percentage ?? '0'), new Dec(tx.refund_info.refund_linked_percentage ?? '0'));
        if (sum.greaterThan(1)) {
          add('refund_info.refund_linked_percentage', `the linked refunds of transaction ${tx.created_from} would add up to ${plain(sum)}, more than the whole (1)`);
        }
      }
    }

    // A linked refund without its own customer or addresses is taxed where its original was.
    if (original !== undefined && customer === undefined && details === undefined) {
      const originalCustomer = (original.customer_details as { customer_id?: string } | undefined)?.customer_id;
      customer = originalCustomer === undefined ? undefined : state.customers.get(originalCustomer)?.value;
    }
    const originalAddresses = original?.addresses as TransactionBody['addresses'] | undefined;
    const address: AddressBody | undefined =
      tx.addresses?.shipping ??
      tx.addresses?.billing ??
      (tx.addresses === undefined ? (originalAddresses?.shipping ?? originalAddresses?.billing) : undefined) ??
      customer?.addresses?.shipping ??
      customer?.addresses?.billing;
    const geo = address === undefined ? undefined : geocode(address, settings.taxTable);
    const scope: ExemptionScope = { location: geo?.location, date: tx.transaction_date?.slice(0, 10) ?? today(clock) };

    const itemExemptions = (tx.items ?? []).map((item, i) => {
      if (item.exemption_id === undefined) return undefined;
      const exemption = state.exemptions.get(item.exemption_id)?.value;
      if (exemption === undefined) {
        add(`items[${i}].exemption_id`, `no exemption with id ${item.exemption_id}`);
        return undefined;
      }
      if (customer !== undefined && exemption.customer_id !== customer.id) {
        add(`items[${i}].exemption_id`, `exemption ${item.exemption_id} belongs to another customer`);
        return undefined;
      }
      // An exemption outside its dates, country or jurisdictions simply does not apply.
      return exemptionApplies(exemption, scope) ? { kind: exemption.exemption_type, exemptionId: exemption.id } : undefined;
    });
    // Not only missing records: a refund of a refund, refunds past the whole, another customer's
    // exemption. The message stays general; the field errors say which.
    if (Object.keys(missing).length > 0) return { ok: false, answer: errorAnswer(422, 'the transaction does not agree with the records it refers to', missing) };

    const customerEffect: ExemptionEffect | undefined =
      customer === undefined ? undefined : customer.customer_type === 'retail_exempt' ? { kind: 'full' } : customerExemption(state, customer.id, scope);
    return {
      ok: true,
      customer,
      original,
      itemExemptions,
      customerEffect,
      location: geo?.location,
      matched: tx.addresses?.shipping === undefined ? undefined : geo?.matched,
    };
  }
}

function responseAddresses(addresses: NonNullable<TransactionBody['addresses']>, matched: MatchedAddress | undefined) {
  return {
    ...addresses,
    ...(addresses.shipping === undefined ? {} : { shipping: { ...addresses.shipping, ...(matched === undefined ? {} : { matched_address: matched }) } }),
  };
}
