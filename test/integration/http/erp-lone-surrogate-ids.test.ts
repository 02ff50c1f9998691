import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/config/secret.js';
import { erpConnector } from '../../../src/connectors/erp/index.js';
import { recordKeyString } from '../../../src/domain/record-key.js';
import { isTaxsyncError } from '../../../src/domain/errors.js';
import { buildApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createKeys } from '../../../src/queue/keys.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

const SECRET = 'whsec_ZTJlLWVycC1zZWNyZXQtZm9yLXRlc3Rz';

/**
 * Ids with a lone UTF-16 surrogate (JSON allows `"\ud800"`) cannot be encoded into a Redis key
 * (encodeURIComponent throws URIError). The platform connectors refuse them; the ERP path must too,
 * element by element and naming the field, never with a 5xx that the ERP retries for ever.
 */
describe('ERP events with lone-surrogate ids', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let app: FastifyInstance;

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    app = await buildApp({
      connectors: { erp: { connector: erpConnector, settings: { source: 'api', secrets: [new Secret(SECRET)], toleranceSeconds: 300 } } },
      producer: pipeline.producer,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 1024 * 1024,
      rawBodyLimitBytes: 4096,
      limits: { maxDepth: 32, maxBatch: 10 },
      ready: () => Promise.resolve(true),
      health: { usesEmulator: true },
    });
  });
  afterEach(async () => {
    await app.close();
    await pipeline.close();
  });

  function post(text: string) {
    const raw = Buffer.from(text);
    return app.inject({ method: 'POST', url: '/webhooks/erp', payload: raw, headers: { 'content-type': 'application/json', ...erpConnector.sign(raw, SECRET, new Date()) } });
  }
  const customer = (id: string, externalId: string) =>
    `{"id":"${id}","type":"customer.upserted","occurred_at":"2026-11-20T10:00:00Z","record":{"kind":"customer","external_id":"${externalId}"},"data":{"name":"Ada"}}`;
  const refund = (externalId: string, invoiceId: string) =>
    `{"id":"erp-${externalId}","type":"refund.created","occurred_at":"2026-11-20T10:00:00Z","record":{"kind":"transaction","external_id":"${externalId}"},"data":{"invoice_external_id":"${invoiceId}","issued_at":"2026-11-20T10:00:00Z","currency":"EUR","amount":"10.00"}}`;

  it('answers a per-element error naming the field for each id with a lone surrogate, and accepts the good elements', async () => {
    const res = await post(`[${customer('erp-C-1', 'C-1')},${customer('erp-C-2', 'C-\\ud800')},${refund('refund-R-1', 'INV-\\udc00')},${customer('erp-\\ud800', 'C-3')}]`);
    expect(res.statusCode).toBe(202);
    const body = res.json<{ accepted: number; rejected: { index: number; message: string; fields: Record<string, string[]> }[] }>();
    expect(body.accepted).toBe(1);
    expect(body.rejected.map((r) => r.index)).toEqual([1, 2, 3]);
    expect(body.rejected.map((r) => Object.keys(r.fields))).toEqual([['record.external_id'], ['data.invoice_external_id'], ['id']]);
    for (const r of body.rejected) expect(Object.values(r.fields).flat().join(' ')).toMatch(/well-formed Unicode/);
  });

  it('keeps a single such event as a dead letter naming the field, never a 5xx', async () => {
    const res = await post(customer('erp-C-9', '\\udbff'));
    // Signed but invalid: kept for an operator (the delivery is not retried), the field named.
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json()).toMatchObject({ accepted: 0, dead_lettered: 1 });
    const [entry] = await pipeline.deadLetters.list();
    expect(entry?.error).toMatchObject({ code: 'INVALID_PAYLOAD', fields: { 'record.external_id': [expect.stringMatching(/well-formed Unicode/)] } });
  });

  it('building a key from such an id is a validation error with code and field, never a URIError', () => {
    const keyOf = () => recordKeyString({ kind: 'vat', source: 'api', external_id: 'INV-\ud800' });
    expect(keyOf).toThrow(/external_id/);
    try {
      keyOf();
    } catch (error) {
      expect(isTaxsyncError(error) && error.code === 'INVALID_PAYLOAD' && error.fields).toEqual({ external_id: [expect.stringMatching(/well-formed Unicode/)] });
    }
    const keys = createKeys('{t}');
    expect(() => keys.vatLedger('ej', 'INV-\udfff')).toThrow(expect.objectContaining({ code: 'INVALID_PAYLOAD', fields: { invoice_number: [expect.any(String)] } }));
  });
});
