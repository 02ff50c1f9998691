import { describe, expect, it } from 'vitest';
import { createDriftReporter, type DriftFinding, type TransactionRequest, type VatTransactionRequest } from '../../../src/api/index.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { useFakeApi } from '../../helpers/api-harness.js';
import { replyJson } from '../../helpers/fake-api.js';
import { parseReportingPeriod, reconcile } from '../../../src/vat-ops/reconcile.js';

/**
 * The clients against answers an independent implementation of both services may give, each
 * within what the contract allows or a little past it (a null where it shows a value, a value it
 * does not list, a field it does not document). Each is read; each difference is reported as
 * drift, never as a failure. The bodies follow the field tables of the two service documents.
 */

const TRANSACTION_ID = '5b0d6a8e-1c39-4f0e-9d2a-7a1f3c9e4b21';
const CUSTOMER_ID = '0c6f2e53-9f7b-4c1e-8a4d-2b5e7d9f1a30';
const ORIGINAL_ID = '8e2a4c61-3d5b-4f7a-9c1e-6b0d2f4a8c13';

const ukInvoice: TransactionRequest = {
  source: 'api',
  external_id: 'INV-UK-77',
  transaction_date: '2026-11-20T09:30:00Z',
  transaction_type: 'invoice',
  currency_details: { currency: 'GBP' },
  addresses: { shipping: { street: '10 Downing St', city: 'London', zip: 'SW1A 2AA', country: 'GB' } },
  customer_details: { customer_external_id: 'C-77', customer_source: 'api' },
  items: [{ name: 'Tea set', unit_price: '39.99', quantity: '1' }],
};

/** The stored transaction as a service outside the US answers it: no state anywhere, nulls for what it lacks. */
function ukTransaction(overrides: Record<string, unknown> = {}) {
  return {
    id: TRANSACTION_ID,
    tenant_id: '1f9c3b7e-2a6d-4e8f-b0c1-3d5e7f9a1b2c',
    source: 'api',
    external_id: 'INV-UK-77',
    transaction_date: '2026-11-20T09:30:00Z',
    transaction_type: 'invoice',
    transaction_status: 'active',
    is_tax_inclusive: false,
    created_from: null,
    currency_details: { currency: 'GBP', exchange_rate_info: null },
    addresses: {
      shipping: {
        street: '10 Downing St',
        city: 'London',
        zip: 'SW1A 2AA',
        country: 'GB',
        matched_address: {
          address: { street: '10 Downing Street', city: 'London', state: null, zip: 'SW1A 2AA', country: 'GB' },
          latitude: 51.5034,
          longitude: '-0.1276',
          confidence: '0.93',
          match_level: 'street',
          address_corrected: true,
          low_confidence_warning: false,
        },
      },
    },
    customer_details: { customer_id: CUSTOMER_ID, customer_type_override: null },
    items: [
      {
        name: 'Tea set',
        unit_price: '39.99',
        quantity: '1',
        total_price: '39.99',
        total_price_after_discount: '39.99',
        tangible_category: 'tangible',
        taxable_category: 'not_taxable',
        taxability_reason: 'not_collecting',
        is_exempt: false,
        tax: { total_tax: '0.00', effective_tax_rate: '0.0000' },
      },
    ],
    shipping_fee: null,
    tax: { total_tax: '0.00', effective_tax_rate: '0.0000' },
    amounts: { total_items_amount: '39.99', final_transaction_amount: '39.99', total_discount: '0.00' },
    created_at: '2026-11-20T09:30:01Z',
    updated_at: '2026-11-20T09:30:01Z',
    ...overrides,
  };
}

const ENTITY_JURISDICTION = '3c1d5e7f-9a2b-4c6d-8e0f-1a3b5c7d9e2f';
const vatRequest: VatTransactionRequest = {
  entity_jurisdiction: ENTITY_JURISDICTION,
  invoice_number: 'RE-2026-0042',
  invoice_date: '2026-11-18',
  partner_name: 'Muster GmbH',
  partner_country: 'DE',
  vat_number: 'DE123456789',
  net: '100.00',
  vat: '19.00',
  gross: '119.00',
  vat_rate: '19.00',
  vat_rate_type: 'standard',
  currency: 'EUR',
  reporting_period: '2026-11-01',
  transaction_type_id: 'b2b5a1e5-0000-4000-8000-000000000001',
  source: 'api',
};

describe('reading answers tolerantly', () => {
  const ctx = useFakeApi();
  const drift: DriftFinding[] = [];
  const connect = () => {
    drift.length = 0;
    return ctx.connect({ onDrift: (finding) => drift.push(finding) });
  };
  const driftAt = (path: string) => drift.filter((d) => d.path === path).map((d) => `${d.endpoint} ${d.kind}`);

  it('reads a transaction whose customer_type_override is null, reporting the null as drift', async () => {
    ctx.api.on('PUT /v1/transactions/', replyJson(201, ukTransaction()));
    const clients = connect();

    const stored = await clients.tax.transactions.upsert(ukInvoice);

    expect(stored.id).toBe(TRANSACTION_ID);
    expect(driftAt('customer_details.customer_type_override')).toEqual(['PUT /v1/transactions/ null']);
  });

  it('reads a UK address matched without a state (null), the refund fields intact', async () => {
    ctx.api.on('GET /v1/transactions/api/INV-UK-77', replyJson(200, ukTransaction()));
    const clients = connect();

    const original = await clients.tax.transactions.getByKey('api', 'INV-UK-77');

    expect(original).toMatchObject({ id: TRANSACTION_ID, is_tax_inclusive: false, tax: { total_tax: '0.00' }, amounts: { final_transaction_amount: '39.99' } });
    expect(driftAt('addresses.shipping.matched_address.address.state')).toEqual(['GET /v1/transactions/{source}/{external_id} null']);
    // Coordinates as a number and as a string are both what the decisions allow: no drift.
    expect(drift.filter((d) => d.path.endsWith('itude') || d.path.endsWith('confidence'))).toEqual([]);
  });

  it('reads a VAT submission whose validity and compliance statuses are values added later, as accepted', async () => {
    ctx.api.on(
      'POST /api/vat/v1/transactions/',
      replyJson(201, {
        id: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a',
        entity_jurisdiction: ENTITY_JURISDICTION,
        invoice_number: 'RE-2026-0042',
        partner_name: 'Muster GmbH',
        net: '100.00',
        vat: '19.00',
        gross: '119.00',
        validity_status: 'pending_review',
        compliance_status: 'not_assessed',
        committed: false,
        created_at: '2026-11-20T09:31:00Z',
      }),
    );
    const clients = connect();

    const submitted = await clients.vat.submitTransaction(vatRequest);

    expect(submitted).toMatchObject({ status: 201, withWarnings: false, transaction: { id: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a' } });
    expect(driftAt('validity_status')).toEqual(['POST /api/vat/v1/transactions/ unknown_enum']);
    expect(driftAt('compliance_status')).toEqual(['POST /api/vat/v1/transactions/ unknown_enum']);
  });

  it('reads a registration whose status is a value added later, keeping the value as sent', async () => {
    ctx.api.on(
      'GET /registrations/v1/registrations/',
      replyJson(200, {
        count: 1,
        next: null,
        previous: null,
        results: [
          {
            id: '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
            entity_jurisdiction: ENTITY_JURISDICTION,
            taxable_jurisdiction_detail: { id: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e', name: 'Germany', iso: 'DE' },
            entity_detail: { id: '7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2f1e', name: 'Acme Trading GmbH' },
            number: 'DE123456789',
            number_local: '',
            fiscal_code: '',
            date_of_registration: '2024-01-01',
            date_registration_closed: null,
            date_of_filing_start: '2024-01-01',
            registration_type: 'standard',
            registration_type_display: 'Standard',
            status: 'suspended',
            status_display: 'Suspended',
            direct_debit_setup: false,
          },
        ],
      }),
    );
    const clients = connect();

    const page = await clients.vat.registrations.list();

    expect(page.results.map((r) => [r.taxable_jurisdiction_detail?.iso, r.status])).toEqual([['DE', 'suspended']]);
    expect(driftAt('results[].status')).toEqual(['GET /registrations/v1/registrations/ unknown_enum']);
  });

  it('reads a transaction with fields the contract does not document, at every level', async () => {
    const body = ukTransaction({ geocoder_version: 7 });
    body.items[0] = { ...body.items[0]!, warehouse_code: 'LHR-2' } as (typeof body.items)[0];
    (body.addresses.shipping.matched_address as Record<string, unknown>).timezone = 'Europe/London';
    ctx.api.on('GET /v1/transactions/' + TRANSACTION_ID, replyJson(200, body));
    const clients = connect();

    const read = await clients.tax.transactions.get(TRANSACTION_ID);

    expect(read.id).toBe(TRANSACTION_ID);
    expect(drift.filter((d) => d.kind === 'extra').map((d) => d.path).sort()).toEqual([
      'addresses.shipping.matched_address.timezone',
      'geocoder_version',
      'items[].warehouse_code',
    ]);
  });

  it('reads a transaction without matched_address, breakdowns, exchange_rate_info or amounts, and a customer without its key', async () => {
    const { amounts: _a, ...withoutAmounts } = ukTransaction();
    const bare = {
      ...withoutAmounts,
      addresses: { shipping: { city: 'London', country: 'GB' } },
      currency_details: { currency: 'GBP' },
      customer_details: { customer_id: CUSTOMER_ID },
    };
    ctx.api.on('GET /v1/transactions/' + TRANSACTION_ID, replyJson(200, bare));
    ctx.api.on('GET /v1/customers/' + CUSTOMER_ID, replyJson(200, { id: CUSTOMER_ID, name: 'Lovelace & Co' }));
    const clients = connect();

    const read = await clients.tax.transactions.get(TRANSACTION_ID);
    const customer = await clients.tax.customers.get(CUSTOMER_ID);

    expect(read.id).toBe(TRANSACTION_ID);
    expect(read.amounts).toBeUndefined();
    expect(customer).toMatchObject({ id: CUSTOMER_ID, name: 'Lovelace & Co' });
    // Optional in the contract: not drift. The customer's key is required there: drift, read anyway.
    expect(drift.filter((d) => d.endpoint.startsWith('GET /v1/transactions/'))).toEqual([]);
    expect(drift.filter((d) => d.endpoint === 'GET /v1/customers/{id}')).toEqual([
      { endpoint: 'GET /v1/customers/{id}', path: 'source', kind: 'missing' },
      { endpoint: 'GET /v1/customers/{id}', path: 'external_id', kind: 'missing' },
    ]);
  });

  it('reads decimals of any scale as written, and an exponent form in plain notation', async () => {
    ctx.api.on(
      'GET /v1/transactions/' + ORIGINAL_ID,
      replyJson(
        200,
        ukTransaction({
          id: ORIGINAL_ID,
          tax: { total_tax: '3.300000', effective_tax_rate: '0.08250000' },
          // A Python service prints Decimal('0.00000000') as "0E-8".
          amounts: { total_items_amount: '39.9900', final_transaction_amount: '0E-8' },
          refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5000000000' },
        }),
      ),
    );
    const clients = connect();

    const read = await clients.tax.transactions.get(ORIGINAL_ID);

    expect(read.tax?.total_tax).toBe('3.300000');
    expect(read.amounts).toMatchObject({ total_items_amount: '39.9900', final_transaction_amount: '0' });
    expect(read.refund_info?.refund_linked_percentage).toBe('0.5000000000');
    // Any scale is the contract's own; only the exponent spelling differs from it.
    const ofNumbers = drift.filter((d) => /^(tax|amounts|refund_info)\./.test(d.path));
    expect(ofNumbers.map((d) => `${d.path} ${d.kind}`)).toEqual(['amounts.final_transaction_amount wrong_type']);
  });

  it('reads amounts written as JSON numbers exactly (total_tax 1.5 is "1.5"), reporting them as drift', async () => {
    // Many tax services write amounts as JSON numbers. Up to 15 significant digits a number holds
    // exactly the decimal that was written; read as absent, an invoice taxsync never received
    // could not give its refund a share (MAPPING_INVALID), and a tax-inclusive one lost its tax.
    ctx.api.on(
      'GET /v1/transactions/api/INV-UK-77',
      replyJson(200, ukTransaction({ is_tax_inclusive: true, tax: { total_tax: 1.5, effective_tax_rate: 0.0825 }, amounts: { total_items_amount: 110.5, final_transaction_amount: 1e2 } })),
    );

    const read = await connect().tax.transactions.getByKey('api', 'INV-UK-77');

    expect(read.tax?.total_tax).toBe('1.5');
    expect(read.amounts).toMatchObject({ total_items_amount: '110.5', final_transaction_amount: '100' });
    expect(driftAt('tax.total_tax')).toEqual(['GET /v1/transactions/{source}/{external_id} wrong_type']);
  });

  it('reads is_tax_inclusive written as the string "true" as true, reporting it as drift (read as false, a refund of that invoice took too small a share)', async () => {
    ctx.api.on('GET /v1/transactions/api/INV-UK-78', replyJson(200, ukTransaction({ is_tax_inclusive: 'true' })));
    const read = await connect().tax.transactions.getByKey('api', 'INV-UK-78');
    expect(read.is_tax_inclusive).toBe(true);
    expect(driftAt('is_tax_inclusive')).toEqual(['GET /v1/transactions/{source}/{external_id} wrong_type']);
  });

  it('reads draft return box values written as JSON numbers, so vat reconcile matches a filing that holds the ledger exactly', async () => {
    const FILING = 'f1f1f1f1-2222-4333-8444-555566667777';
    const box = (n: string, value: number) => ({ box_number: n, description: `box ${n}`, value, currency: 'EUR' });
    ctx.api.on(
      `GET /api/filing/v1/filings/${FILING}/draft-return-boxes/`,
      replyJson(200, {
        boxes: [box('1', 190.05), box('2', 0), box('3', 190.05), box('4', 0), box('5', 190.05), box('6', 1000.25), box('7', 0), box('8', 0), box('9', 1)],
        total_vat_due: 190.05,
        reporting_period: '2025-01-01/2025-03-31',
      }),
    );

    const boxes = await connect().vat.filings.draftReturnBoxes(FILING);
    const report = reconcile({
      period: parseReportingPeriod('2025-Q1'),
      entries: [
        {
          entity_jurisdiction: ENTITY_JURISDICTION,
          invoice_number: 'RE-2025-0001',
          entry: { state: 'confirmed', ambiguous: false, attempts: 1, resends: 0, reporting_period: '2025-01-01', net: '1000.25', vat: '190.05', currency: 'EUR' },
        },
      ],
      filing: { id: FILING, currency: 'EUR', entity_jurisdiction: ENTITY_JURISDICTION, boxes },
    });

    expect(boxes.boxes.find((b) => b.box_number === '1')?.value).toBe('190.05');
    expect(report.differences).toEqual([]);
    expect(report.matches).toBe(true);
  });

  it('reads an id written as a JSON number as its digits, so a refund of that invoice can name it in created_from', async () => {
    ctx.api.on('GET /v1/transactions/api/INV-UK-77', replyJson(200, ukTransaction({ id: 418_2031 })));
    ctx.api.on('PUT /v1/customers/', replyJson(201, { id: 77, source: 'api', external_id: 'C-77' }));
    const clients = connect();

    const original = await clients.tax.transactions.getByKey('api', 'INV-UK-77');
    const customer = await clients.tax.customers.upsert({ source: 'api', external_id: 'C-77' });

    expect(original.id).toBe('4182031');
    expect(customer.id).toBe('77');
    expect(driftAt('id')).toContain('GET /v1/transactions/{source}/{external_id} wrong_type');
    // Beyond 2^53 a number has lost digits in JSON.parse: not an id taxsync can send back.
    ctx.api.on('GET /v1/transactions/api/INV-BIG', replyJson(200, ukTransaction({ id: 2 ** 60 + 1 })));
    await expect(clients.tax.transactions.getByKey('api', 'INV-BIG')).rejects.toMatchObject({ code: 'API_BAD_RESPONSE' });
  });

  it('reads a JSON answer that starts with a byte-order mark and says it is text/plain', async () => {
    ctx.api.on('GET /v1/customers/' + CUSTOMER_ID, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`\uFEFF${JSON.stringify({ id: CUSTOMER_ID, source: 'api', external_id: 'C-77', name: 'Lovelace & Co' })}`);
    });

    await expect(connect().tax.customers.get(CUSTOMER_ID)).resolves.toMatchObject({ id: CUSTOMER_ID, name: 'Lovelace & Co' });
    expect(drift).toEqual([]);
  });

  it('never refuses a VAT submission answered 2xx, even with a body that is not JSON', async () => {
    ctx.api.on('POST /api/vat/v1/transactions/', (_req, res) => {
      res.writeHead(201, { 'content-type': 'text/plain' });
      res.end('Created');
    });
    const clients = connect();

    const submitted = await clients.vat.submitTransaction(vatRequest);

    expect(submitted).toMatchObject({ status: 201, withWarnings: false });
    expect(submitted.transaction.id).toBeUndefined();
    expect(drift).toEqual([{ endpoint: 'POST /api/vat/v1/transactions/', path: '(body)', kind: 'wrong_type' }]);
  });
});

describe('drift reporting', () => {
  const ctx = useFakeApi();

  it('logs each drift shape once per process without any value from the answer, and counts every occurrence', async () => {
    const lines: { object: Record<string, unknown>; message: string }[] = [];
    const metrics = createMetrics({ defaultMetrics: false });
    const onDrift = createDriftReporter({ logger: { warn: (object, message) => lines.push({ object, message }) }, count: metrics.observeDrift });
    ctx.api.on('PUT /v1/transactions/', replyJson(201, ukTransaction()));
    const clients = ctx.connect({ onDrift });

    for (let i = 0; i < 3; i++) await clients.tax.transactions.upsert(ukInvoice);

    // Two shapes (customer_type_override null, the matched state null), each logged once.
    expect(lines.map((l) => l.object)).toEqual([
      { endpoint: 'PUT /v1/transactions/', path: 'addresses.shipping.matched_address.address.state', kind: 'null' },
      { endpoint: 'PUT /v1/transactions/', path: 'customer_details.customer_type_override', kind: 'null' },
    ]);
    const logged = JSON.stringify(lines);
    for (const value of ['London', 'SW1A', 'Downing', 'Tea set', '39.99', TRANSACTION_ID, CUSTOMER_ID]) expect(logged).not.toContain(value);
    const counted = (await metrics.registry.getSingleMetric('taxsync_response_drift_total')!.get()).values;
    expect(counted.map((v) => [v.labels.path, v.value]).sort()).toEqual([
      ['addresses.shipping.matched_address.address.state', 3],
      ['customer_details.customer_type_override', 3],
    ]);
  });
});
