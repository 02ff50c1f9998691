import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { createCustomerHandler } from '../../../src/processors/customer.js';
import { createExemptionHandler } from '../../../src/processors/exemption.js';
import { readTrace } from '../../../src/queue/trace.js';
import { useFakeApi } from '../../helpers/api-harness.js';
import { erpCustomer, erpExemption, erpInvoice, erpRefund, type ErpEvent } from '../../helpers/erp-events.js';
import { answerJson, jsonBody, replyJson } from '../../helpers/fake-api.js';
import { createPipeline, eventually, startTransactionsWorker, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Writes the service accepted (2xx) are applied whatever their answer's body holds: nothing is
 * dead-lettered or sent again because of the body, and what a later refund needs from the
 * original (its id) is read back by key. The answers are varied as an independent implementation
 * of the tax engine gives them (field tables of tax-calculation-api.md).
 */

const ORIGINAL_ID = '8e2a4c61-3d5b-4f7a-9c1e-6b0d2f4a8c13';
const REFUND_ID = '2d4f6a8c-0e1b-4d3f-9a5c-7e9b1d3f5a70';
const CUSTOMER_ID = '0c6f2e53-9f7b-4c1e-8a4d-2b5e7d9f1a30';
const EXEMPTION_ID = '4a6c8e0b-2d4f-4a6c-8e0b-2d4f6a8c0e1b';

const canonical = (event: ErpEvent) => CanonicalEvent.parse({ ...event, connector: 'erp' });
const key = (externalId: string) => ({ kind: 'transaction' as const, source: 'api', external_id: externalId });

/** A stored transaction as a service of its own answers it: nulls, a value added later, fields not documented, decimals of other scales. */
function variedTransaction(id: string, externalId: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    source: 'api',
    external_id: externalId,
    transaction_status: 'active',
    is_tax_inclusive: false,
    created_from: null,
    currency_details: { currency: 'USD', exchange_rate_info: null, rate_source: 'ecb' },
    addresses: {
      shipping: {
        street: '350 5th Ave',
        city: 'New York',
        zip: '10001',
        country: 'US',
        matched_address: { address: { city: 'New York', state: null, country: 'US' }, latitude: 40.7484, longitude: '-73.9857', match_level: 'rooftop' },
      },
    },
    customer_details: { customer_id: null, customer_type_override: null },
    items: [{ unit_price: '80.00', quantity: '1.000', taxability_reason: 'marketplace_facilitated', tax: { total_tax: '7.1000' } }],
    tax: { total_tax: '7.1000', effective_tax_rate: '0.08875000' },
    amounts: { total_items_amount: '80.0000', final_transaction_amount: '80.0000' },
    engine_revision: 'r2026.11',
    ...extra,
  };
}

describe('writes accepted with answers taxsync cannot fully read', () => {
  const redis = useRedis();
  const ctx = useFakeApi();
  let pipeline: Pipeline;
  let idUnknown: string[];

  beforeEach(async () => {
    idUnknown = [];
    pipeline = await createPipeline(redis.url, redis.prefix, { observe: { onIdUnknown: (queue) => idUnknown.push(queue) } });
  });
  afterEach(async () => {
    await pipeline.close();
  });

  async function transactionsWorker(): Promise<void> {
    await startTransactionsWorker(pipeline, ctx.connect().tax);
  }

  const applied = async (externalId: string) => {
    const state = await pipeline.records.read(key(externalId));
    return state.seq > 0 && state.appliedSeq === state.seq;
  };
  const puts = (externalId: string) => ctx.api.requestsTo('PUT /v1/transactions/').filter((r) => (jsonBody(r) as { external_id: string }).external_id === externalId);

  it('links a refund to an invoice whose upsert and read-back answers vary from the contract', async () => {
    ctx.api.on('PUT /v1/transactions/', (req, res) => {
      const body = jsonBody(req) as { external_id: string };
      answerJson(res, 201, body.external_id === 'INV-1' ? variedTransaction(ORIGINAL_ID, 'INV-1') : variedTransaction(REFUND_ID, body.external_id, { transaction_type: 'refund' }));
    });
    ctx.api.on('GET /v1/transactions/api/INV-1', replyJson(200, variedTransaction(ORIGINAL_ID, 'INV-1')));
    await transactionsWorker();

    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 1, [{ unit_price: '80.00', quantity: '1' }]))] });
    await eventually(() => applied('INV-1'));
    await pipeline.producer.accept({ events: [canonical(erpRefund('R-1', 2, 'INV-1', '40.00'))] });
    await eventually(() => applied('R-1'));

    const [refund] = puts('R-1');
    // The invoice's amount is 80.00 × 1 = 80.00 (tax-exclusive); the refund takes 40.00 ÷ 80.00 = 0.5 of it.
    expect(jsonBody(refund!)).toMatchObject({ transaction_type: 'refund', created_from: ORIGINAL_ID, refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5' } });
    expect(puts('INV-1')).toHaveLength(1);
    expect(await pipeline.deadLetters.count()).toBe(0);
    expect((await pipeline.records.read(key('INV-1'))).taxId).toBe(ORIGINAL_ID);
  });

  it('records an upsert answered 200 without an id as done, never sends it again, and reads the id back by key for the refund', async () => {
    ctx.api.on('PUT /v1/transactions/', (req, res) => {
      const body = jsonBody(req) as { external_id: string };
      if (body.external_id === 'INV-2') answerJson(res, 200, { source: 'api', external_id: 'INV-2', transaction_status: 'active', tax: { total_tax: '7.10' } });
      else answerJson(res, 201, variedTransaction(REFUND_ID, body.external_id));
    });
    ctx.api.on('GET /v1/transactions/api/INV-2', replyJson(200, variedTransaction(ORIGINAL_ID, 'INV-2')));
    await transactionsWorker();

    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-2', 1, [{ unit_price: '80.00', quantity: '1' }]))] });
    await eventually(() => applied('INV-2'));
    const state = await pipeline.records.read(key('INV-2'));
    expect(state.taxId).toBe(ORIGINAL_ID);
    const answered = (await readTrace(redis.redis, pipeline.keys, 'transaction|api|INV-2')).filter((t) => t.step === 'answered');
    expect(answered.map((t) => t.detail)).toEqual([expect.stringContaining('read back by key')]);

    await pipeline.producer.accept({ events: [canonical(erpRefund('R-2', 2, 'INV-2', '20.00'))] });
    await eventually(() => applied('R-2'));

    // 20.00 ÷ 80.00 = 0.25 of the invoice.
    expect(jsonBody(puts('R-2')[0]!)).toMatchObject({ created_from: ORIGINAL_ID, refund_info: { refund_linked_percentage: '0.25' } });
    expect(puts('INV-2')).toHaveLength(1);
    expect(await pipeline.deadLetters.count()).toBe(0);
    expect(idUnknown).toEqual([]);
  });

  it('keeps an upsert whose id cannot be learned applied with its id unknown, and the refund reads it by key later', async () => {
    let visible = false;
    ctx.api.on('PUT /v1/transactions/', (req, res) => {
      const body = jsonBody(req) as { external_id: string };
      if (body.external_id === 'INV-3') answerJson(res, 201);
      else answerJson(res, 201, variedTransaction(REFUND_ID, body.external_id));
    });
    // The service stored it but does not show it by key yet (a replica behind): 404 at first.
    ctx.api.on('GET /v1/transactions/api/INV-3', (_req, res) =>
      visible ? answerJson(res, 200, variedTransaction(ORIGINAL_ID, 'INV-3')) : answerJson(res, 404, { detail: 'Not found.' }),
    );
    await transactionsWorker();

    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-3', 1, [{ unit_price: '80.00', quantity: '1' }]))] });
    await eventually(() => applied('INV-3'));

    const state = await pipeline.records.read(key('INV-3'));
    expect(state.taxId).toBeUndefined();
    const last = (await readTrace(redis.redis, pipeline.keys, 'transaction|api|INV-3')).at(-1);
    expect(last).toMatchObject({ step: 'answered', status: 201, detail: expect.stringContaining('tax engine id unknown') });
    expect(idUnknown).toEqual(['transactions']);
    expect(await pipeline.deadLetters.count()).toBe(0);

    visible = true;
    await pipeline.producer.accept({ events: [canonical(erpRefund('R-3', 2, 'INV-3', '80.00'))] });
    await eventually(() => applied('R-3'));

    // 80.00 ÷ 80.00 = the whole invoice.
    expect(jsonBody(puts('R-3')[0]!)).toMatchObject({ created_from: ORIGINAL_ID, refund_info: { refund_linked_percentage: '1' } });
    expect(puts('INV-3')).toHaveLength(1);
  });

  it('sends an upsert answered 200 by a page that is not the service (a WAF, a proxy) again, never taking it as applied', async () => {
    let pages = 0;
    ctx.api.on('PUT /v1/transactions/', (req, res) => {
      const body = jsonBody(req) as { external_id: string };
      if (pages < 2) {
        pages += 1;
        // F5's default blocking page answers 200.
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<html><head><title>Request Rejected</title></head><body>The requested URL was rejected. Your support ID is: 1234</body></html>');
        return;
      }
      answerJson(res, 201, variedTransaction(ORIGINAL_ID, body.external_id));
    });
    await transactionsWorker();

    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-6', 1, [{ unit_price: '80.00', quantity: '1' }]))] });
    await eventually(() => applied('INV-6'));

    expect(puts('INV-6')).toHaveLength(3);
    expect((await pipeline.records.read(key('INV-6'))).taxId).toBe(ORIGINAL_ID);
    expect(await pipeline.deadLetters.count()).toBe(0);
    const retries = (await readTrace(redis.redis, pipeline.keys, 'transaction|api|INV-6')).filter((t) => t.step === 'retry');
    expect(retries.map((t) => t.code)).toEqual(['API_FOREIGN_ANSWER', 'API_FOREIGN_ANSWER']);
  });

  it('records a customer upsert answered 200 with only its name as done, the id read back by key', async () => {
    ctx.api.on('PUT /v1/customers/', replyJson(200, { name: 'C-5 version 1', customer_type: 'b2b_marketplace', customer_status: null }));
    ctx.api.on('GET /v1/customers/api/C-5', replyJson(200, { id: CUSTOMER_ID, source: 'api', external_id: 'C-5', tax_number: null }));
    await pipeline.startWorker('customers', createCustomerHandler({ tax: ctx.connect().tax, settings: DEFAULT_SETTINGS.mapping, writers: pipeline.writers }));

    await pipeline.producer.accept({ events: [canonical(erpCustomer('C-5', 1))] });
    const customer = { kind: 'customer' as const, source: 'api', external_id: 'C-5' };
    await eventually(async () => (await pipeline.records.read(customer)).appliedSeq === 1);

    expect((await pipeline.records.read(customer)).taxId).toBe(CUSTOMER_ID);
    expect(ctx.api.requestsTo('PUT /v1/customers/')).toHaveLength(1);
    expect(await pipeline.deadLetters.count()).toBe(0);
  });

  describe('exemptions (no key to read them back by)', () => {
    let created: object | undefined;
    let listed: boolean;

    beforeEach(async () => {
      created = undefined;
      listed = false;
      ctx.api.on('GET /v1/customers/api/C-9', replyJson(200, { id: CUSTOMER_ID, source: 'api', external_id: 'C-9', customer_status: null }));
      ctx.api.on('POST /v1/exemptions/', (req, res) => {
        created = jsonBody(req) as object;
        answerJson(res, 201, { exemption_status: 'active', certificate_status: 'pending_upload' });
      });
      ctx.api.on('GET /v1/exemptions/', (_req, res) =>
        answerJson(res, 200, {
          data: listed && created ? [{ ...created, id: EXEMPTION_ID, exemption_status: 'active' }] : [],
          cursors: { after: null, before: null, has_next: false, has_previous: false, limit: 100 },
        }),
      );
      ctx.api.on(`PUT /v1/exemptions/${EXEMPTION_ID}`, (req, res) => answerJson(res, 200, { ...(jsonBody(req) as object), id: EXEMPTION_ID }));
      const clients = ctx.connect();
      await pipeline.startWorker('customers', createExemptionHandler({ tax: clients.tax, records: pipeline.records, settings: DEFAULT_SETTINGS.mapping }));
    });

    const exemptionKey = { kind: 'exemption' as const, source: 'api', external_id: 'EX-9' };
    const exemptionApplied = async () => {
      const state = await pipeline.records.read(exemptionKey);
      return state.seq > 0 && state.appliedSeq === state.seq;
    };

    it('finds a create answered 201 without an id by its body, and updates it afterwards instead of creating another', async () => {
      listed = true;
      await pipeline.producer.accept({ events: [canonical(erpExemption('EX-9', 1, 'C-9'))] });
      await eventually(exemptionApplied);
      expect((await pipeline.records.read(exemptionKey)).taxId).toBe(EXEMPTION_ID);

      await pipeline.producer.accept({ events: [canonical(erpExemption('EX-9', 2, 'C-9', { jurisdictions: ['NY'] }))] });
      await eventually(async () => ctx.api.requestsTo(`PUT /v1/exemptions/${EXEMPTION_ID}`).length === 1);
      expect(ctx.api.requestsTo('POST /v1/exemptions/')).toHaveLength(1);
    });

    it('keeps the pending-create mark when the created exemption cannot be found yet, so the next version finds it rather than creating a second', async () => {
      await pipeline.producer.accept({ events: [canonical(erpExemption('EX-9', 1, 'C-9'))] });
      await eventually(exemptionApplied);
      const first = await pipeline.records.read(exemptionKey);
      expect(first.taxId).toBeUndefined();
      expect(first.createPending).toBeDefined();
      expect(idUnknown).toEqual(['customers']);

      listed = true;
      await pipeline.producer.accept({ events: [canonical(erpExemption('EX-9', 2, 'C-9', { jurisdictions: ['NY'] }))] });
      await eventually(async () => (await exemptionApplied()) && (await pipeline.records.read(exemptionKey)).taxId === EXEMPTION_ID);
      expect(ctx.api.requestsTo('POST /v1/exemptions/')).toHaveLength(1);
      expect(ctx.api.requestsTo(`PUT /v1/exemptions/${EXEMPTION_ID}`)).toHaveLength(1);
    });
  });
});
