import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { erpConnector } from '../../../src/connectors/erp/index.js';
import { Secret } from '../../../src/domain/secret.js';
import { buildApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { startModelRig, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Invoices and refunds share the tax engine's (source, external_id) space (DESIGN.md, data model),
 * so their ids must never collide: platform connectors give refunds the `refund-` prefix (docs/
 * events.md, "External ids"). The ERP chooses its ids itself. An ERP that numbers credit notes in a
 * series of their own (credit note 1001 of invoice 1000, while invoice 1001 exists) must not turn
 * invoice 1001 into a refund in the engine: the event is refused at the door, with its reason.
 */

const SECRET = 'whsec_ZTJlLWVycC1zZWNyZXQtZm9yLXRlc3Rz';
const TX = (external_id: string) => ({ kind: 'transaction' as const, source: 'api', external_id });

const invoice = (id: string) => ({
  id: `erp-inv-${id}`,
  type: 'invoice.upserted',
  occurred_at: '2026-11-20T10:00:00Z',
  record: { kind: 'transaction', external_id: id },
  data: { number: id, issued_at: '2026-11-20T10:00:00Z', status: 'paid', currency: 'USD', tax_inclusive: false, lines: [{ unit_price: '100.00', quantity: '1' }] },
});
const creditNote = (id: string, invoiceId: string) => ({
  id: `erp-cn-${id}`,
  type: 'refund.created',
  occurred_at: '2026-11-20T11:00:00Z',
  record: { kind: 'transaction', external_id: id },
  data: { invoice_external_id: invoiceId, issued_at: '2026-11-20T11:00:00Z', currency: 'USD', amount: '40.00' },
});

describe('ERP refunds and invoices', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    await rig?.close();
    app = undefined;
    rig = undefined;
  });

  async function start() {
    rig = await startModelRig(redis.url, { queues: ['transactions'] });
    const made = await buildApp({
      connectors: { erp: { connector: erpConnector, settings: { source: 'api', secrets: [new Secret(SECRET)], toleranceSeconds: 300 }, connection: { id: 'erp', source: 'api', externalIdPrefix: '' } } },
      producer: rig.pipeline.producer,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 1024 * 1024,
      rawBodyLimitBytes: 64 * 1024,
      limits: { maxDepth: 32, maxBatch: 50 },
      ready: () => Promise.resolve(true),
      health: { usesEmulator: true },
    });
    app = made;
    return {
      rig,
      post: (body: unknown) => {
        const raw = Buffer.from(JSON.stringify(body));
        return made.inject({ method: 'POST', url: '/webhooks/erp', payload: raw, headers: { 'content-type': 'application/json', ...erpConnector.sign(raw, SECRET, new Date()) } });
      },
    };
  }

  it('never turn an invoice into a refund: a refund whose id an invoice can have is refused, naming the prefix', async () => {
    const { rig, post } = await start();
    expect((await post([invoice('1000'), invoice('1001')])).statusCode).toBe(202);
    expect(await rig.settle([TX('1000'), TX('1001')])).toBe(true);

    // Credit note 1001 of invoice 1000, sent with the ERP's own number as its id.
    const res = await post([creditNote('1001', '1000'), creditNote('refund-CN-7', '1000')]);
    expect(res.statusCode).toBe(202);
    const body = res.json<{ accepted: number; rejected?: { index: number; fields: Record<string, string[]> }[] }>();
    expect(body.accepted).toBe(1);
    expect(body.rejected?.map((r) => r.index)).toEqual([0]);
    expect(body.rejected?.[0]?.fields['record.external_id']?.[0]).toMatch(/refund-/);
    expect(await rig.settle([TX('1000'), TX('1001'), TX('refund-CN-7')])).toBe(true);

    // Invoice 1001 is still an invoice; the well-named credit note is linked to invoice 1000.
    expect(rig.engine.transactions.get('api|1001')?.body).toMatchObject({ transaction_type: 'invoice', document_name: '1001' });
    expect(rig.engine.transactions.get('api|refund-CN-7')?.body).toMatchObject({ transaction_type: 'refund', created_from: rig.engine.transactions.get('api|1000')?.id });
  });

  it('refuse an invoice whose id has the refunds\u2019 prefix', async () => {
    const { post } = await start();
    const res = await post(invoice('refund-1001'));
    expect(res.statusCode).toBe(202);
    expect(res.json<{ accepted: number; dead_lettered: number }>()).toMatchObject({ accepted: 0, dead_lettered: 1 });
  });
});
