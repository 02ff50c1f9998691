import { connect } from 'node:net';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import type { RegistrationListQuery, VatTransactionRequest } from '../../../src/api/index.js';
import { apiError, useFakeApi } from '../../helpers/api-harness.js';
import { answerJson, jsonBody, replyJson, type FakeApi, type Handler } from '../../helpers/fake-api.js';

const ENTITY_JURISDICTION = '5b1e1f38-6c1a-4c4e-9d7e-1a2b3c4d5e6f';
const TYPE_ID = '9a7b5c3d-1e2f-4a6b-8c0d-2e4f6a8b0c1d';
const ENTITY = 'c0ffee00-1234-4abc-9def-0123456789ab';
const JURISDICTION = 'd00dfeed-0000-4000-8000-00000000002a';
const REGISTRATION_ID = '1d4e2f3a-5b6c-4d7e-8f90-a1b2c3d4e5f6';
const FILING_ID = 'f1f1f1f1-2222-4333-8444-555566667777';
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;

const vatRequest: VatTransactionRequest = {
  entity_jurisdiction: ENTITY_JURISDICTION,
  invoice_number: 'INV-2025-0001',
  invoice_date: '2025-03-01',
  partner_name: 'Muster GmbH',
  partner_country: 'DE',
  vat_number: 'DE123456789',
  net: '100.00',
  vat: '19.00',
  gross: '119.00',
  vat_rate: '19.00',
  vat_rate_type: 'standard',
  currency: 'EUR',
  reporting_period: '2025-03-01',
  transaction_type_id: TYPE_ID,
  source: 'shopify',
};

const vatResponse = {
  id: uuid(1),
  entity_jurisdiction: ENTITY_JURISDICTION,
  invoice_number: 'INV-2025-0001',
  partner_name: 'Muster GmbH',
  net: '100.00',
  vat: '19.00',
  gross: '119.00',
  validity_status: 'valid',
  compliance_status: 'valid',
  committed: false,
  created_at: '2025-03-02T08:00:00Z',
};

const registration = {
  id: REGISTRATION_ID,
  entity_jurisdiction: ENTITY_JURISDICTION,
  taxable_jurisdiction_detail: { id: JURISDICTION, name: 'Germany', iso: 'DE' },
  entity_detail: { id: ENTITY, name: 'ACME Ltd' },
  number: 'DE123456789',
  number_local: '',
  fiscal_code: '',
  date_of_registration: '2024-01-01',
  date_registration_closed: null,
  date_of_filing_start: '2024-01-01',
  fiscal_representative_type: 'not_required',
  fiscal_representative_type_display: 'Not required',
  registration_type: 'standard',
  registration_type_display: 'Standard',
  status: 'active',
  status_display: 'Active',
  direct_debit_setup: false,
  created_at: '2024-01-01T00:00:00Z',
  updated_at: '2024-01-01T00:00:00Z',
};

const filing = {
  id: FILING_ID,
  status: 'draft',
  due_date: '2025-04-10',
  submitted_date: null,
  filing_reference: null,
  total_vat_due: '1234.56',
  total_net: '6497.68',
  currency: 'EUR',
};

const REGISTRATIONS_PATH = '/registrations/v1/registrations/';

/** Three pages of registrations, selected by `?page=`, linked by absolute next/previous URLs on `api`. */
function linkedPages(api: FakeApi, pageCount: number): Handler {
  return (req, res) => {
    const page = Number(req.query.get('page') ?? '1');
    const link = (n: number) => {
      const query = new URLSearchParams(req.query);
      query.set('page', String(n));
      return `${api.url}${REGISTRATIONS_PATH}?${query.toString()}`;
    };
    answerJson(res, 200, {
      count: pageCount * 2,
      next: page < pageCount ? link(page + 1) : null,
      previous: page > 1 ? link(page - 1) : null,
      results: [0, 1].map((i) => ({ ...registration, id: uuid(page * 10 + i), number: `P${page}-${i}` })),
    });
  };
}

describe('VAT client', () => {
  const ctx = useFakeApi();

  describe('submitTransaction', () => {
    it('posts the VAT transaction as JSON and reports 201 as created without warnings', async () => {
      ctx.api.on('POST /api/vat/v1/transactions/', replyJson(201, vatResponse));

      const result = await ctx.connect().vat.submitTransaction(vatRequest);

      expect(result).toEqual({ transaction: vatResponse, status: 201, withWarnings: false });
      const [post] = ctx.api.requestsTo('POST /api/vat/v1/transactions/');
      expect(post!.headers['content-type']).toBe('application/json');
      expect(post!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
      expect(jsonBody(post!)).toEqual(vatRequest);
    });

    it('reports 200 as processed with warnings', async () => {
      const warned = { ...vatResponse, validity_status: 'warning', compliance_status: 'warning' };
      ctx.api.on('POST /api/vat/v1/transactions/', replyJson(200, warned));

      const result = await ctx.connect().vat.submitTransaction(vatRequest);

      expect(result.status).toBe(200);
      expect(result.withWarnings).toBe(true);
      expect(result.transaction.validity_status).toBe('warning');
    });

    it('uses the configured module segment in the path', async () => {
      ctx.api.on('POST /api/compliance/v1/transactions/', replyJson(201, vatResponse));

      await ctx.connect({ vatModule: 'compliance' }).vat.submitTransaction(vatRequest);

      expect(ctx.api.requestsTo('POST /api/compliance/v1/transactions/')).toHaveLength(1);
    });

    it('sends to a separate VAT URL with the one token fetched from the tax engine', async () => {
      const vatServer = await ctx.server();
      vatServer.on('POST /api/vat/v1/transactions/', replyJson(201, vatResponse));
      ctx.api.on('PUT /v1/customers/', replyJson(200, { id: uuid(5), source: 'api', external_id: 'c' }));
      const clients = ctx.connect({ vatUrl: vatServer.url });

      await clients.tax.customers.upsert({ source: 'api', external_id: 'c' });
      await clients.vat.submitTransaction(vatRequest);

      expect(ctx.tokens.issued).toHaveLength(1);
      expect(vatServer.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/vat/v1/transactions/']);
      expect(vatServer.requests[0]!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
    });
  });

  describe('transactionTypes', () => {
    const types = [
      { id: TYPE_ID, name: 'B2B Sales' },
      { id: uuid(2), name: 'Intra-EU Supplies', description: 'zero rated' },
    ];

    it('accepts a bare array', async () => {
      ctx.api.on('GET /api/vat/v1/transaction-types/', replyJson(200, types));

      await expect(ctx.connect().vat.transactionTypes()).resolves.toEqual(types);
      expect(ctx.api.requestsTo('GET /api/vat/v1/transaction-types/')[0]!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
    });

    it('accepts {results: [...]}', async () => {
      ctx.api.on('GET /api/vat/v1/transaction-types/', replyJson(200, { count: 2, results: types }));

      await expect(ctx.connect().vat.transactionTypes()).resolves.toEqual(types);
    });

    it('reads every page of a paged list, following next (a type on page 2 is still known)', async () => {
      // The shape the registration list has, with a page size smaller than the list.
      ctx.api.on('GET /api/vat/v1/transaction-types/', (req, res) => {
        const page = req.query.get('page') ?? '1';
        answerJson(res, 200, {
          count: 2,
          next: page === '1' ? `${ctx.api.url}/api/vat/v1/transaction-types/?page=2` : null,
          previous: page === '1' ? null : `${ctx.api.url}/api/vat/v1/transaction-types/`,
          results: page === '1' ? [types[0]] : [types[1]],
        });
      });

      await expect(ctx.connect().vat.transactionTypes()).resolves.toEqual(types);
      expect(ctx.api.requestsTo('GET /api/vat/v1/transaction-types/').map((r) => r.query.get('page'))).toEqual([null, '2']);
    });
  });

  describe('registrations', () => {
    const filters: { name: string; query: RegistrationListQuery; expected: Record<string, string> }[] = [
      { name: 'number', query: { number: 'DE123' }, expected: { number: 'DE123' } },
      { name: 'entity', query: { entity: ENTITY }, expected: { entity: ENTITY } },
      { name: 'taxable_jurisdiction', query: { taxable_jurisdiction: JURISDICTION }, expected: { taxable_jurisdiction: JURISDICTION } },
      { name: 'entity_jurisdiction', query: { entity_jurisdiction: ENTITY_JURISDICTION }, expected: { entity_jurisdiction: ENTITY_JURISDICTION } },
      { name: 'order_by ascending', query: { order_by: 'date_of_registration' }, expected: { order_by: 'date_of_registration' } },
      { name: 'order_by descending', query: { order_by: '-entity_name' }, expected: { order_by: '-entity_name' } },
      {
        name: 'all together',
        query: { number: 'DE', entity: ENTITY, order_by: 'fiscal_code' },
        expected: { number: 'DE', entity: ENTITY, order_by: 'fiscal_code' },
      },
    ];

    it.each(filters)('lists with the $name filter in the query', async ({ query, expected }) => {
      ctx.api.on(`GET ${REGISTRATIONS_PATH}`, replyJson(200, { count: 1, next: null, previous: null, results: [registration] }));

      const page = await ctx.connect().vat.registrations.list(query);

      expect(page.results.map((r) => r.id)).toEqual([REGISTRATION_ID]);
      expect(page.count).toBe(1);
      expect(Object.fromEntries(ctx.api.requestsTo(`GET ${REGISTRATIONS_PATH}`)[0]!.query)).toEqual(expected);
    });

    it('refuses an unknown order_by field locally without any request', async () => {
      const error = await apiError(ctx.connect().vat.registrations.list({ order_by: 'iban' as never }));

      expect(error.code).toBe('REQUEST_INVALID');
      expect(error.fields).toHaveProperty('order_by');
      expect(ctx.api.requests).toEqual([]);
    });

    it('pages forward across three pages by following next links, filters kept', async () => {
      ctx.api.on(`GET ${REGISTRATIONS_PATH}`, linkedPages(ctx.api, 3));

      const numbers: string[] = [];
      for await (const r of ctx.connect().vat.registrations.iterate({ entity: ENTITY })) numbers.push(r.number!);

      expect(numbers).toEqual(['P1-0', 'P1-1', 'P2-0', 'P2-1', 'P3-0', 'P3-1']);
      expect(ctx.api.requestsTo(`GET ${REGISTRATIONS_PATH}`).map((r) => Object.fromEntries(r.query))).toEqual([
        { entity: ENTITY },
        { entity: ENTITY, page: '2' },
        { entity: ENTITY, page: '3' },
      ]);
      expect(ctx.api.requestsTo(`GET ${REGISTRATIONS_PATH}`).every((r) => r.headers.authorization === `Bearer ${ctx.tokens.issued[0]}`)).toBe(
        true,
      );
    });

    it('pages backward across three pages by following previous links from a given page', async () => {
      ctx.api.on(`GET ${REGISTRATIONS_PATH}`, linkedPages(ctx.api, 3));

      const pages: string[][] = [];
      const from = `${ctx.api.url}${REGISTRATIONS_PATH}?page=3`;
      for await (const page of ctx.connect().vat.registrations.pages({ direction: 'backward', from })) {
        pages.push(page.results.map((r) => r.number!));
      }

      expect(pages).toEqual([
        ['P3-0', 'P3-1'],
        ['P2-0', 'P2-1'],
        ['P1-0', 'P1-1'],
      ]);
      expect(ctx.api.requestsTo(`GET ${REGISTRATIONS_PATH}`).map((r) => r.query.get('page'))).toEqual(['3', '2', '1']);
    });

    it('refuses a next link to another origin and never sends the token there', async () => {
      const foreign = await ctx.server();
      foreign.fallback(replyJson(200, { count: 0, next: null, previous: null, results: [] }));
      ctx.api.on(
        `GET ${REGISTRATIONS_PATH}`,
        replyJson(200, { count: 4, next: `${foreign.url}${REGISTRATIONS_PATH}?page=2`, previous: null, results: [registration] }),
      );

      const seen: string[] = [];
      const error = await apiError(
        (async () => {
          for await (const r of ctx.connect().vat.registrations.iterate()) seen.push(r.id);
        })(),
      );

      expect(error.code).toBe('API_BAD_RESPONSE');
      expect(error.message).toContain(foreign.url);
      expect(seen).toEqual([REGISTRATION_ID]);
      expect(foreign.requests).toEqual([]);
    });

    it('follows a relative next link, resolved against the page it came from', async () => {
      ctx.api.on(`GET ${REGISTRATIONS_PATH}`, (req, res) => {
        const page = req.query.get('page') ?? '1';
        answerJson(res, 200, {
          count: 2,
          next: page === '1' ? `${REGISTRATIONS_PATH}?page=2` : null,
          previous: page === '1' ? null : REGISTRATIONS_PATH,
          results: [{ ...registration, id: uuid(Number(page)), number: `P${page}` }],
        });
      });

      const numbers: string[] = [];
      for await (const r of ctx.connect().vat.registrations.iterate()) numbers.push(r.number!);

      expect(numbers).toEqual(['P1', 'P2']);
    });

    /**
     * https://vat.example.com as the fake server behind a proxy that ends TLS: every connection the
     * client opens lands on the fake server; `connections` records what the client asked for.
     */
    function behindProxy(connections: string[]): Agent {
      return new Agent({
        connect: (options, callback) => {
          connections.push(`${options.protocol}//${options.hostname}:${options.port || '(default)'}`);
          const socket = connect(ctx.api.port, '127.0.0.1');
          socket.once('connect', () => callback(null, socket));
          socket.once('error', (error) => callback(error, null));
        },
      });
    }

    it('follows an http:// next link to its own https host over https (a service behind a proxy that ends TLS writes its links so)', async () => {
      const connections: string[] = [];
      const dispatcher = behindProxy(connections);
      try {
        ctx.api.on(`GET ${REGISTRATIONS_PATH}`, (req, res) => {
          const page = req.query.get('page') ?? '1';
          answerJson(res, 200, {
            count: 2,
            next: page === '1' ? `http://vat.example.com${REGISTRATIONS_PATH}?page=2` : null,
            previous: page === '1' ? null : `http://vat.example.com${REGISTRATIONS_PATH}`,
            results: [{ ...registration, id: uuid(Number(page)), number: `P${page}` }],
          });
        });

        const numbers: string[] = [];
        for await (const r of ctx.connect({ taxUrl: 'https://vat.example.com', dispatcher }).vat.registrations.iterate()) numbers.push(r.number!);

        expect(numbers).toEqual(['P1', 'P2']);
        expect(ctx.api.requestsTo(`GET ${REGISTRATIONS_PATH}`).map((r) => r.query.get('page'))).toEqual([null, '2']);
        // Never a plain-http connection: the token went only over https.
        expect(new Set(connections)).toEqual(new Set(['https://vat.example.com:(default)']));
      } finally {
        await dispatcher.close();
      }
    });

    it('refuses an http:// link to its own https host on another port (never plain http, never another service)', async () => {
      const connections: string[] = [];
      const dispatcher = behindProxy(connections);
      try {
        const error = await apiError(
          ctx.connect({ taxUrl: 'https://vat.example.com', dispatcher }).vat.registrations.list({ from: `http://vat.example.com:8000${REGISTRATIONS_PATH}?page=2` }),
        );

        expect(error.code).toBe('API_BAD_RESPONSE');
        expect(ctx.api.requestsTo(`GET ${REGISTRATIONS_PATH}`)).toEqual([]);
        expect(connections.every((c) => c.startsWith('https://vat.example.com:'))).toBe(true);
      } finally {
        await dispatcher.close();
      }
    });

    it('refuses a link that switches the scheme of the same host', async () => {
      const error = await apiError(ctx.connect().vat.registrations.list({ from: `https://127.0.0.1:${ctx.api.port}${REGISTRATIONS_PATH}?page=2` }));

      expect(error.code).toBe('API_BAD_RESPONSE');
      expect(ctx.api.requestsTo(`GET ${REGISTRATIONS_PATH}`)).toEqual([]);
    });

    it('creates with POST; text fields come back as empty strings', async () => {
      const body = { taxable_jurisdiction: 'DE', entity: ENTITY, registration_type: 'one_stop_shop' as const, date_of_registration: '2025-01-01' };
      ctx.api.on(`POST ${REGISTRATIONS_PATH}`, replyJson(201, { ...registration, number: '', registration_type: 'one_stop_shop' }));

      const created = await ctx.connect().vat.registrations.create(body);

      expect(created.registration_type).toBe('one_stop_shop');
      expect(created.number).toBe('');
      const [post] = ctx.api.requestsTo(`POST ${REGISTRATIONS_PATH}`);
      expect(post!.headers['content-type']).toBe('application/json');
      expect(jsonBody(post!)).toEqual(body);
    });

    it('reads one by id with a trailing slash', async () => {
      ctx.api.on(`GET ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`, replyJson(200, registration));

      const got = await ctx.connect().vat.registrations.get(REGISTRATION_ID);

      expect(got.id).toBe(REGISTRATION_ID);
      expect(got.status).toBe('active');
    });

    it('updates with PUT and the full body', async () => {
      const body = { taxable_jurisdiction: 'DE', entity: ENTITY, number: 'DE999', iban: 'DE89370400440532013000' };
      ctx.api.on(`PUT ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`, replyJson(200, { ...registration, number: 'DE999' }));

      const updated = await ctx.connect().vat.registrations.update(REGISTRATION_ID, body);

      expect(updated.number).toBe('DE999');
      expect(jsonBody(ctx.api.requestsTo(`PUT ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`)[0]!)).toEqual(body);
    });

    it('patches with PATCH and only the given fields', async () => {
      ctx.api.on(
        `PATCH ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`,
        replyJson(200, { ...registration, date_registration_closed: '2025-06-30', status: 'active' }),
      );

      const patched = await ctx.connect().vat.registrations.patch(REGISTRATION_ID, { date_registration_closed: '2025-06-30' });

      expect(patched.date_registration_closed).toBe('2025-06-30');
      expect(jsonBody(ctx.api.requestsTo(`PATCH ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`)[0]!)).toEqual({ date_registration_closed: '2025-06-30' });
    });

    it('deletes by id', async () => {
      ctx.api.on(`DELETE ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`, replyJson(204));

      await expect(ctx.connect().vat.registrations.delete(REGISTRATION_ID)).resolves.toBeUndefined();
      const [del] = ctx.api.requestsTo(`DELETE ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`);
      expect(del!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
    });

    it('reads a registration without registration_type (documented as required) as one of unknown type', async () => {
      const { registration_type: _t, ...without } = registration;
      ctx.api.on(`GET ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`, replyJson(200, without));

      const read = await ctx.connect().vat.registrations.get(REGISTRATION_ID);

      expect(read.id).toBe(REGISTRATION_ID);
      expect(read.registration_type).toBeUndefined();
    });

    it('refuses a registration without an id, naming the field', async () => {
      const { id: _id, ...without } = registration;
      ctx.api.on(`GET ${REGISTRATIONS_PATH}${REGISTRATION_ID}/`, replyJson(200, without));

      const error = await apiError(ctx.connect().vat.registrations.get(REGISTRATION_ID));

      expect(error.code).toBe('API_BAD_RESPONSE');
      expect(Object.keys(error.fields ?? {})).toEqual(['id']);
    });
  });

  describe('filings', () => {
    const FILINGS = '/api/filing/v1/filings/';

    it('creates with POST and the three fields', async () => {
      const body = { registration_filing_type: uuid(3), reporting_period_start: '2025-01-01', reporting_period_end: '2025-03-31' };
      ctx.api.on(`POST ${FILINGS}`, replyJson(201, filing));

      await expect(ctx.connect().vat.filings.create(body)).resolves.toEqual(filing);
      const [post] = ctx.api.requestsTo(`POST ${FILINGS}`);
      expect(post!.headers['content-type']).toBe('application/json');
      expect(jsonBody(post!)).toEqual(body);
    });

    it('reads one by id', async () => {
      ctx.api.on(`GET ${FILINGS}${FILING_ID}/`, replyJson(200, filing));

      await expect(ctx.connect().vat.filings.get(FILING_ID)).resolves.toEqual(filing);
    });

    it('lists its files from {results}', async () => {
      const file = {
        id: uuid(4),
        file_type: 'vat_return',
        filename: 'return.xml',
        download_url: 'https://files.example.com/return.xml',
        created_at: '2025-04-01T00:00:00Z',
      };
      ctx.api.on(`GET ${FILINGS}${FILING_ID}/files/`, replyJson(200, { results: [file] }));

      await expect(ctx.connect().vat.filings.files(FILING_ID)).resolves.toEqual([file]);
    });

    it('reads the draft return boxes', async () => {
      const boxes = {
        boxes: [{ box_number: '81', description: 'Taxable supplies at 19%', value: '6497.68', currency: 'EUR' }],
        total_vat_due: '1234.56',
        reporting_period: '2025-Q1',
      };
      ctx.api.on(`GET ${FILINGS}${FILING_ID}/draft-return-boxes/`, replyJson(200, boxes));

      await expect(ctx.connect().vat.filings.draftReturnBoxes(FILING_ID)).resolves.toEqual(boxes);
    });

    it('approves and uses the Filing the approve call answers', async () => {
      ctx.api.on(`POST ${FILINGS}${FILING_ID}/approve/`, replyJson(200, { ...filing, status: 'approved' }));

      const approved = await ctx.connect().vat.filings.approve(FILING_ID, { approved_by: 'ops@example.com', approval_notes: 'checked' });

      expect(approved.status).toBe('approved');
      expect(jsonBody(ctx.api.requestsTo(`POST ${FILINGS}${FILING_ID}/approve/`)[0]!)).toEqual({
        approved_by: 'ops@example.com',
        approval_notes: 'checked',
      });
      expect(ctx.api.requestsTo(`GET ${FILINGS}${FILING_ID}/`)).toEqual([]);
    });

    it('approves with an empty 204 and then re-reads the filing', async () => {
      ctx.api.on(`POST ${FILINGS}${FILING_ID}/approve/`, replyJson(204));
      ctx.api.on(`GET ${FILINGS}${FILING_ID}/`, replyJson(200, { ...filing, status: 'approved' }));

      const approved = await ctx.connect().vat.filings.approve(FILING_ID);

      expect(approved.status).toBe('approved');
      expect(jsonBody(ctx.api.requestsTo(`POST ${FILINGS}${FILING_ID}/approve/`)[0]!)).toEqual({});
      expect(ctx.api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'POST /v1/auth/token',
        `POST ${FILINGS}${FILING_ID}/approve/`,
        `GET ${FILINGS}${FILING_ID}/`,
      ]);
    });
  });
});
