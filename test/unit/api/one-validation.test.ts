import { afterEach, describe, expect, it, vi } from 'vitest';
import { CustomerRequest, TransactionRequest } from '../../../src/api/index.js';
import { checkRequest } from '../../../src/api/request.js';
import { mapCustomer, mapInvoice } from '../../../src/mapping/index.js';
import { apiError, useFakeApi } from '../../helpers/api-harness.js';
import { jsonBody, replyJson } from '../../helpers/fake-api.js';
import { ctx as mappingCtx, customerData, invoiceData } from '../mapping/helpers.js';

// A body is validated once: by the mapping (src/mapping/result.ts `checked`, through
// src/api/request.ts `checkRequest`) or, for a body nobody checked, by the client.

const TRANSACTION = { id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', source: 'api', external_id: 'INV-1' };
const CUSTOMER = { id: '3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e', source: 'api', external_id: 'C-1' };

function mappedInvoice() {
  const mapped = mapInvoice(invoiceData({ lines: [{ name: 'Widget', unit_price: '19.99', quantity: '2' }] }), mappingCtx('transaction', 'INV-1'));
  if (mapped.kind !== 'send') throw new Error(`expected a body, got ${mapped.kind}`);
  return mapped.body;
}

describe('one validation of a request body', () => {
  const ctx = useFakeApi();
  afterEach(() => vi.restoreAllMocks());

  it('parses a mapped invoice body once: in the mapping, not again in the client', async () => {
    ctx.api.on('PUT /v1/transactions/', replyJson(200, TRANSACTION));
    const parse = vi.spyOn(TransactionRequest, 'safeParse');

    const body = mappedInvoice();
    await ctx.connect().tax.transactions.upsert(body);

    expect(parse).toHaveBeenCalledTimes(1);
    expect(jsonBody(ctx.api.requestsTo('PUT /v1/transactions/')[0]!)).toEqual(JSON.parse(JSON.stringify(body)));
  });

  it('parses a mapped customer body once as well', async () => {
    ctx.api.on('PUT /v1/customers/', replyJson(200, CUSTOMER));
    const parse = vi.spyOn(CustomerRequest, 'safeParse');

    const mapped = mapCustomer(customerData({ name: 'Ada' }), mappingCtx('customer', 'C-1'));
    if (mapped.kind !== 'send') throw new Error(`expected a body, got ${mapped.kind}`);
    await ctx.connect().tax.customers.upsert(mapped.body);

    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('freezes a checked body to its last nested value, so it cannot change between the check and the call', () => {
    const body = mappedInvoice();

    expect(() => {
      (body as { external_id: string }).external_id = 'INV-2';
    }).toThrow(TypeError);
    expect(() => {
      (body.items![0] as { unit_price: string }).unit_price = '0.01';
    }).toThrow(TypeError);
    expect(() => (body.items as unknown[]).push({ name: 'extra', unit_price: '1', quantity: '1' })).toThrow(TypeError);
    expect(body.external_id).toBe('INV-1');
  });

  it('still refuses an edited copy of a checked body with the same code and field path as an unchecked one', async () => {
    const edited = structuredClone(mappedInvoice()) as unknown as { items: Record<string, unknown>[] };
    edited.items[0]!.lineAmount = '39.98';

    const error = await apiError(ctx.connect().tax.transactions.upsert(edited as unknown as TransactionRequest));

    expect(error.code).toBe('REQUEST_INVALID');
    expect(error.retryable).toBe(false);
    expect(Object.keys(error.fields ?? {})).toEqual(['items[0].lineAmount']);
    expect(error.message).toMatch(/^PUT \/v1\/transactions\/: request body is invalid: items\[0\]\.lineAmount: unknown field lineAmount/);
    expect(ctx.api.requests).toEqual([]);
  });

  it('parses a body checked with another schema: a customer body sent as a transaction is refused', async () => {
    const customer = checkRequest(CustomerRequest, { source: 'api', external_id: 'C-1', name: 'Ada' });
    if (!customer.ok) throw new Error('expected a checked customer');

    const error = await apiError(ctx.connect().tax.transactions.upsert(customer.body));

    expect(error.code).toBe('REQUEST_INVALID');
    expect(ctx.api.requests).toEqual([]);
  });

  it('parses an unchecked body in the client, once', async () => {
    ctx.api.on('PUT /v1/transactions/', replyJson(200, TRANSACTION));
    const plain = structuredClone(mappedInvoice());
    const parse = vi.spyOn(TransactionRequest, 'safeParse');

    await ctx.connect().tax.transactions.upsert(plain);

    expect(parse).toHaveBeenCalledTimes(1);
    expect(ctx.api.requestsTo('PUT /v1/transactions/')).toHaveLength(1);
  });
});
