import { describe, expect, it } from 'vitest';
import { acceptedUnreadable, type ApiClients, type CustomerRequest, type ExemptionRequest, type RecordResource, type TransactionRequest } from '../../../src/api/index.js';
import { apiError, useFakeApi } from '../../helpers/api-harness.js';
import { answerJson, jsonBody, replyJson, type Handler } from '../../helpers/fake-api.js';

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const CUSTOMER_ID = '3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e';
const TRANSACTION_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const EXEMPTION_ID = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
const CLIENT_SUB = 'taxsync-test-client';

const customerRequest: CustomerRequest = {
  source: 'shopify',
  external_id: 'cust-1',
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  customer_type: 'wholesale',
  addresses: { billing: { street: '1 Main St', city: 'Austin', state: 'TX', zip: '78701', country: 'US' } },
  external_updated_at: '2025-03-01T10:00:00Z',
};

const customerResponse = {
  ...customerRequest,
  id: CUSTOMER_ID,
  created_at: '2025-03-01T10:00:01Z',
  updated_at: '2025-03-01T10:00:01Z',
  // Fields the contract does not list must not break parsing.
  loyalty_tier: 'gold',
  addresses: { billing: { ...customerRequest.addresses!.billing, geo_hint: 'x' } },
};

const transactionRequest: TransactionRequest = {
  source: 'shopify',
  external_id: 'inv-1001',
  transaction_date: '2025-03-01T10:00:00Z',
  transaction_type: 'invoice',
  transaction_status: 'active',
  currency_details: { currency: 'USD' },
  customer_details: { customer_external_id: 'cust-1', customer_source: 'shopify' },
  addresses: { shipping: { street: '1 Main St', city: 'Austin', state: 'TX', zip: '78701', country: 'US' } },
  items: [
    { name: 'Widget', tax_code: 'P0000000', unit_price: '19.99', quantity: '2' },
    { name: 'Store credit', unit_price: '-5.00', quantity: '1' },
  ],
  shipping_fee: { amount: '4.95' },
};

const transactionResponse = {
  ...transactionRequest,
  id: TRANSACTION_ID,
  tenant_id: uuid(99),
  addresses: {
    shipping: {
      ...transactionRequest.addresses!.shipping,
      matched_address: { confidence: 0.98, latitude: '30.2672', longitude: -97.7431, match_level: 'street', address_corrected: false },
    },
  },
  items: [
    { name: 'Widget', unit_price: '19.99', quantity: '2', total_price: '39.98', taxability_reason: 'standard_rated', tax: { total_tax: '3.30' } },
    { name: 'Store credit', unit_price: '-5.00', quantity: '1', total_price: '-5.00' },
  ],
  shipping_fee: { amount: '4.95', tax_code: null },
  tax: { total_tax: '3.30', effective_tax_rate: '0.0825' },
  amounts: { total_items_amount: '34.98', final_transaction_amount: '34.98' },
  geocoder_version: 7,
};

const exemptionRequest: ExemptionRequest = {
  customer_id: CUSTOMER_ID,
  country: 'US',
  jurisdictions: [],
  start_date: '2025-01-01',
  end_date: null,
  certificate_id: uuid(7),
  exemption_type: 'full',
};
const exemptionResponse = { ...exemptionRequest, id: EXEMPTION_ID, exemption_status: 'active' };

type AnyResource = RecordResource<unknown, { id: string; source?: string; external_id?: string }>;

const RECORD_KINDS = [
  {
    kind: 'customers',
    request: customerRequest,
    response: customerResponse,
    resource: (c: ApiClients): AnyResource => c.tax.customers,
  },
  {
    kind: 'transactions',
    request: transactionRequest,
    response: transactionResponse,
    resource: (c: ApiClients): AnyResource => c.tax.transactions,
  },
] as const;

/**
 * A cursor-paged list over `records`, `size` per page: cursor `cur-<i>` points at record i;
 * `after` pages forward from it, `before` pages back from it.
 */
function cursorPaged(records: unknown[], size: number, rewrite: (cursors: Record<string, unknown>) => unknown = (cursors) => cursors): Handler {
  return (req, res) => {
    const after = req.query.get('after');
    const before = req.query.get('before');
    const at = (cursor: string) => Number(cursor.replace('cur-', ''));
    const start = after !== null ? at(after) + 1 : before !== null ? Math.max(0, at(before) - size) : 0;
    const end = before !== null ? at(before) : start + size;
    const data = records.slice(start, Math.min(end, records.length));
    answerJson(res, 200, {
      data,
      cursors: rewrite({
        after: data.length > 0 ? `cur-${start + data.length - 1}` : null,
        before: data.length > 0 ? `cur-${start}` : null,
        has_next: start + data.length < records.length,
        has_previous: start > 0,
        limit: size,
      }),
    });
  };
}

describe('tax engine client', () => {
  const ctx = useFakeApi();

  it('verify posts the current token to /v1/auth/verify and answers its claims, extra claims kept', async () => {
    ctx.api.on('POST /v1/auth/verify', replyJson(200, { sub: CLIENT_SUB, exp: 1_900_000_000, tenant: 't-1' }));
    const clients = ctx.connect();

    const claims = await clients.tax.verify();

    expect(claims).toEqual({ sub: CLIENT_SUB, exp: 1_900_000_000, tenant: 't-1' });
    const [verify] = ctx.api.requestsTo('POST /v1/auth/verify');
    expect(verify!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
  });

  describe.each(RECORD_KINDS)('$kind', ({ kind, request, response, resource }) => {
    it('upserts with PUT to the collection, source and external_id in the JSON body, never in the path', async () => {
      ctx.api.on(`PUT /v1/${kind}/`, replyJson(200, response));
      const clients = ctx.connect();

      const stored = await resource(clients).upsert(request);

      expect(stored.id).toBe(response.id);
      expect(stored.external_id).toBe(request.external_id);
      const [put] = ctx.api.requestsTo(`PUT /v1/${kind}/`);
      expect(put!.url).toBe(`/v1/${kind}/`);
      expect(put!.headers['content-type']).toBe('application/json');
      expect(put!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
      expect(jsonBody(put!)).toEqual(request);
      expect(jsonBody(put!)).toMatchObject({ source: 'shopify', external_id: request.external_id });
      expect(ctx.api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/auth/token', `PUT /v1/${kind}/`]);
    });

    it('reads one record by internal id', async () => {
      ctx.api.on(`GET /v1/${kind}/${response.id}`, replyJson(200, response));
      const stored = await resource(ctx.connect()).get(response.id);

      expect(stored.id).toBe(response.id);
      expect(ctx.api.requestsTo(`GET /v1/${kind}/${response.id}`)).toHaveLength(1);
    });

    it('reads one record by key, each segment percent-encoded', async () => {
      const encoded = `/v1/${kind}/shopify/order%2F1%20%232%3Fx`;
      ctx.api.on(`GET ${encoded}`, replyJson(200, response));

      const stored = await resource(ctx.connect()).getByKey('shopify', 'order/1 #2?x');

      expect(stored.id).toBe(response.id);
      expect(ctx.api.requestsTo(`GET ${encoded}`)[0]!.url).toBe(encoded);
    });

    it('lists one page with limit and after in the query', async () => {
      ctx.api.on(`GET /v1/${kind}/`, replyJson(200, { data: [response], cursors: { after: 'c9', before: 'c9', has_next: false, has_previous: true, limit: 5 } }));

      const page = await resource(ctx.connect()).list({ limit: 5, after: 'c8' });

      expect(page.data.map((r) => r.id)).toEqual([response.id]);
      expect(page.cursors).toEqual({ after: 'c9', before: 'c9', has_next: false, has_previous: true, limit: 5 });
      const [get] = ctx.api.requestsTo(`GET /v1/${kind}/`);
      expect(Object.fromEntries(get!.query)).toEqual({ limit: '5', after: 'c8' });
    });

    it('pages forward across three pages by sending cursors.after', async () => {
      const records = [0, 1, 2, 3, 4, 5].map((i) => ({ ...response, id: uuid(i), external_id: `r-${i}` }));
      ctx.api.on(`GET /v1/${kind}/`, cursorPaged(records, 2));

      const seen: string[] = [];
      for await (const record of resource(ctx.connect()).iterate({ limit: 2 })) seen.push(record.external_id!);

      expect(seen).toEqual(['r-0', 'r-1', 'r-2', 'r-3', 'r-4', 'r-5']);
      expect(ctx.api.requestsTo(`GET /v1/${kind}/`).map((r) => Object.fromEntries(r.query))).toEqual([
        { limit: '2' },
        { limit: '2', after: 'cur-1' },
        { limit: '2', after: 'cur-3' },
      ]);
    });

    it('pages backward across three pages by sending cursors.before', async () => {
      const records = [0, 1, 2, 3, 4, 5].map((i) => ({ ...response, id: uuid(i), external_id: `r-${i}` }));
      ctx.api.on(`GET /v1/${kind}/`, cursorPaged(records, 2));

      const pages: string[][] = [];
      for await (const page of resource(ctx.connect()).pages({ direction: 'backward', before: 'cur-6' })) {
        pages.push(page.data.map((r) => r.external_id!));
      }

      expect(pages).toEqual([
        ['r-4', 'r-5'],
        ['r-2', 'r-3'],
        ['r-0', 'r-1'],
      ]);
      expect(ctx.api.requestsTo(`GET /v1/${kind}/`).map((r) => Object.fromEntries(r.query))).toEqual([
        { before: 'cur-6' },
        { before: 'cur-4' },
        { before: 'cur-2' },
      ]);
    });

    it('deletes by internal id and accepts an empty 204', async () => {
      ctx.api.on(`DELETE /v1/${kind}/${response.id}`, replyJson(204));

      await expect(resource(ctx.connect()).delete(response.id)).resolves.toBeUndefined();
      expect(ctx.api.requestsTo(`DELETE /v1/${kind}/${response.id}`)).toHaveLength(1);
    });

    it('deletes by key and ignores a 200 body', async () => {
      ctx.api.on(`DELETE /v1/${kind}/stripe/ch_1`, replyJson(200, { deleted: true }));

      await expect(resource(ctx.connect()).deleteByKey('stripe', 'ch_1')).resolves.toBeUndefined();
      expect(ctx.api.requestsTo(`DELETE /v1/${kind}/stripe/ch_1`)).toHaveLength(1);
    });

    it('refuses a page limit of 101 locally without any request', async () => {
      const error = await apiError(resource(ctx.connect()).list({ limit: 101 }));

      expect(error.code).toBe('REQUEST_INVALID');
      expect(error.fields).toHaveProperty('limit');
      expect(ctx.api.requests).toEqual([]);
    });
  });

  it.each([
    ['leaves has_next out (it writes has_more)', (cursors: Record<string, unknown>) => ({ after: cursors.after, before: cursors.before, has_more: cursors.has_next })],
    ['writes has_next as a string', (cursors: Record<string, unknown>) => ({ ...cursors, has_next: String(cursors.has_next) })],
  ])('follows cursors.after to the end of the list when the service %s, instead of stopping after page 1', async (_what, rewrite) => {
    const records = [0, 1, 2, 3, 4].map((i) => ({ ...customerResponse, id: uuid(100 + i), external_id: `c-${i}` }));
    ctx.api.on('GET /v1/customers/', cursorPaged(records, 2, rewrite));

    const seen: string[] = [];
    for await (const customer of ctx.connect().tax.customers.iterate({ limit: 2 })) seen.push(customer.external_id!);

    expect(seen).toEqual(['c-0', 'c-1', 'c-2', 'c-3', 'c-4']);
  });

  it('stops paging when the service repeats a cursor instead of looping', async () => {
    ctx.api.on('GET /v1/customers/', replyJson(200, { data: [customerResponse], cursors: { after: 'same', before: null, has_next: true, has_previous: false, limit: 1 } }));

    const pages = [];
    for await (const page of ctx.connect().tax.customers.pages()) pages.push(page);

    expect(pages).toHaveLength(2);
    expect(ctx.api.requestsTo('GET /v1/customers/')).toHaveLength(2);
  });

  it('refuses an item carrying lineAmount locally, names the field, and sends nothing', async () => {
    const body = {
      ...transactionRequest,
      items: [{ name: 'Widget', unit_price: '19.99', quantity: '2', lineAmount: '39.98' }],
    } as unknown as TransactionRequest;

    const error = await apiError(ctx.connect().tax.transactions.upsert(body));

    expect(error.code).toBe('REQUEST_INVALID');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('lineAmount');
    expect(Object.keys(error.fields ?? {})).toEqual(['items[0].lineAmount']);
    expect(ctx.api.requests).toEqual([]);
  });

  it('refuses a write answered 2xx without an id as API_BAD_RESPONSE with that status, saying the write was accepted', async () => {
    const { id: _id, ...withoutId } = customerResponse;
    ctx.api.on('PUT /v1/customers/', replyJson(200, withoutId));

    const error = await apiError(ctx.connect().tax.customers.upsert(customerRequest));

    expect(error.code).toBe('API_BAD_RESPONSE');
    expect(error.retryable).toBe(false);
    expect(Object.keys(error.fields ?? {})).toEqual(['id']);
    expect(error.status).toBe(200);
    expect(error.message).toContain('do not send it again blindly');
    expect(acceptedUnreadable(error)).toBe(true);
  });

  it('reads a list page whose second record lacks external_id, and leaves out a record without an id', async () => {
    const { external_id: _e, ...noKey } = transactionResponse;
    const { id: _i, ...noId } = { ...transactionResponse, external_id: 'inv-no-id' };
    ctx.api.on(
      'GET /v1/transactions/',
      replyJson(200, { data: [transactionResponse, noKey, noId], cursors: { after: null, before: null, has_next: false, has_previous: false, limit: 20 } }),
    );

    const page = await ctx.connect().tax.transactions.list();

    expect(page.data.map((t) => t.id)).toEqual([TRANSACTION_ID, TRANSACTION_ID]);
    expect(page.data[1]!.external_id).toBeUndefined();
  });

  it("refuses a 200 whose body is a page, not the service's answer, when reading a record: retried, not a bad answer", async () => {
    ctx.api.on('GET /v1/customers/c', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>maintenance</html>');
    });

    const error = await apiError(ctx.connect().tax.customers.get('c'));

    expect(error).toMatchObject({ code: 'API_FOREIGN_ANSWER', retryable: true, ambiguous: true });
    expect(error.http?.response?.body).toBe('<html>maintenance</html>');
  });

  it('refuses a 200 whose body is plain text that is not JSON when reading a record', async () => {
    ctx.api.on('GET /v1/customers/c', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('maintenance');
    });

    const error = await apiError(ctx.connect().tax.customers.get('c'));

    expect(error.code).toBe('API_BAD_RESPONSE');
    expect(error.message).toContain('not JSON');
  });

  it('never takes an upsert answered 200 by a page as applied: API_FOREIGN_ANSWER, retryable', async () => {
    ctx.api.on('PUT /v1/transactions/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><body>Access denied</body></html>');
    });

    const error = await apiError(ctx.connect().tax.transactions.upsert(transactionRequest));

    expect(error).toMatchObject({ code: 'API_FOREIGN_ANSWER', retryable: true, ambiguous: true });
  });

  it('reads a decimal that arrives as a JSON number as written, and one with more digits than JSON.parse kept as absent, without failing the read', async () => {
    ctx.api.on('GET /v1/transactions/x', replyJson(200, { ...transactionResponse, tax: { total_tax: 3.3 }, amounts: { final_transaction_amount: 0.1 + 0.2 } }));

    const read = await ctx.connect().tax.transactions.get('x');

    expect(read.id).toBe(TRANSACTION_ID);
    expect(read.tax?.total_tax).toBe('3.3');
    expect(read.amounts?.final_transaction_amount).toBeUndefined();
  });

  describe('exemptions', () => {
    it('creates with POST and the exemption body', async () => {
      ctx.api.on('POST /v1/exemptions/', replyJson(201, exemptionResponse));

      const created = await ctx.connect().tax.exemptions.create(exemptionRequest);

      expect(created).toEqual(exemptionResponse);
      const [post] = ctx.api.requestsTo('POST /v1/exemptions/');
      expect(post!.headers['content-type']).toBe('application/json');
      expect(post!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
      expect(jsonBody(post!)).toEqual(exemptionRequest);
    });

    it('reads one by id', async () => {
      ctx.api.on(`GET /v1/exemptions/${EXEMPTION_ID}`, replyJson(200, exemptionResponse));

      await expect(ctx.connect().tax.exemptions.get(EXEMPTION_ID)).resolves.toEqual(exemptionResponse);
    });

    it('updates with PUT to its id and the full body', async () => {
      const changed = { ...exemptionRequest, exemption_status: 'cancelled' as const };
      ctx.api.on(`PUT /v1/exemptions/${EXEMPTION_ID}`, replyJson(200, { ...changed, id: EXEMPTION_ID }));

      const updated = await ctx.connect().tax.exemptions.update(EXEMPTION_ID, changed);

      expect(updated.exemption_status).toBe('cancelled');
      expect(jsonBody(ctx.api.requestsTo(`PUT /v1/exemptions/${EXEMPTION_ID}`)[0]!)).toEqual(changed);
    });

    it('lists a cursor page', async () => {
      ctx.api.on('GET /v1/exemptions/', replyJson(200, { data: [exemptionResponse], cursors: { after: 'e1', before: 'e1', has_next: false, has_previous: false, limit: 20 } }));

      const page = await ctx.connect().tax.exemptions.list();

      expect(page.data).toEqual([exemptionResponse]);
      expect(page.cursors?.after).toBe('e1');
    });

    it('accepts a bare array as one page without cursors', async () => {
      ctx.api.on('GET /v1/exemptions/', replyJson(200, [exemptionResponse, { ...exemptionResponse, id: uuid(2) }]));

      const all = [];
      for await (const exemption of ctx.connect().tax.exemptions.iterate()) all.push(exemption.id);

      expect(all).toEqual([EXEMPTION_ID, uuid(2)]);
      expect(ctx.api.requestsTo('GET /v1/exemptions/')).toHaveLength(1);
    });

    it('iterates across three cursor pages', async () => {
      const records = [0, 1, 2, 3, 4].map((i) => ({ ...exemptionResponse, id: uuid(i) }));
      ctx.api.on('GET /v1/exemptions/', cursorPaged(records, 2));

      const all = [];
      for await (const exemption of ctx.connect().tax.exemptions.iterate({ limit: 2 })) all.push(exemption.id);

      expect(all).toEqual(records.map((r) => r.id));
      expect(ctx.api.requestsTo('GET /v1/exemptions/')).toHaveLength(3);
    });

    it('deletes by id', async () => {
      ctx.api.on(`DELETE /v1/exemptions/${EXEMPTION_ID}`, replyJson(204));

      await expect(ctx.connect().tax.exemptions.delete(EXEMPTION_ID)).resolves.toBeUndefined();
      expect(ctx.api.requestsTo(`DELETE /v1/exemptions/${EXEMPTION_ID}`)).toHaveLength(1);
    });

    it('refuses an exemption body without exemption_type locally', async () => {
      const { exemption_type: _t, ...body } = exemptionRequest;

      const error = await apiError(ctx.connect().tax.exemptions.create(body as ExemptionRequest));

      expect(error.code).toBe('REQUEST_INVALID');
      expect(error.fields).toHaveProperty('exemption_type');
      expect(ctx.api.requests).toEqual([]);
    });
  });
});
