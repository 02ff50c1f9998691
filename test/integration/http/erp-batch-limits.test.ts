import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { erpConnector } from '../../../src/connectors/erp/index.js';
import { buildApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { collectLines } from '../../helpers/log-lines.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

const SECRET = 'whsec_ZTJlLWVycC1zZWNyZXQtZm9yLXRlc3Rz';

/** A canonical customer event as the ERP sends it (docs/events.md). */
function customer(externalId: string, data: string = '{"name":"Ada"}'): string {
  return `{"id":"erp-${externalId}","type":"customer.upserted","occurred_at":"2026-11-20T10:00:00Z","record":{"kind":"customer","external_id":"${externalId}"},"data":${data}}`;
}

/** `{"a":{"a":…1…}}`, `levels` objects deep. */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

describe('ERP batches: each element on its own, limits before parsing', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let app: FastifyInstance;
  let logLines: string[];

  beforeEach(async () => {
    logLines = [];
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    app = await buildApp({
      connectors: { erp: { connector: erpConnector, settings: { source: 'api', secrets: [new Secret(SECRET)], toleranceSeconds: 300 }, connection: { id: 'erp', source: 'api', externalIdPrefix: '' } } },
      producer: pipeline.producer,
      logger: createLogger({ level: 'debug', destination: collectLines(logLines) }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 1024 * 1024,
      rawBodyLimitBytes: 4096,
      limits: { maxDepth: 32, maxBatch: 5 },
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

  it('accepts the good elements of a batch and answers a per-element error for one nested 20,000 levels deep', async () => {
    const res = await post(`[${customer('C-1')},${customer('C-2', `{"name":"Bo","deep":${nested(20_000)}}`)},${customer('C-3')}]`);
    expect(res.statusCode).toBe(202);
    const body = res.json<{ accepted: number; queued: number; dead_lettered: number; rejected: { index: number; message: string; dead_letter_id: string }[] }>();
    expect(body).toMatchObject({ accepted: 2, queued: 2, dead_lettered: 1 });
    expect(body.rejected).toHaveLength(1);
    expect(body.rejected[0]).toMatchObject({ index: 1 });
    expect(body.rejected[0]!.message).toMatch(/event \[1\].*nested deeper than 32 levels.*byte \d+/);
    // The good ones are queued; the deep one is kept as it was sent (cut at the raw-body limit).
    expect(await pipeline.queues.customers.getJobCounts('waiting')).toEqual({ waiting: 2 });
    const entry = await pipeline.deadLetters.get(body.rejected[0]!.dead_letter_id);
    expect(entry?.error.code).toBe('INVALID_PAYLOAD');
    expect(entry?.raw?.body.startsWith('{"id":"erp-C-2"')).toBe(true);
    expect(entry?.raw?.body_truncated).toBe(true);
    // The same delivery again is a duplicate, not a 5xx loop.
    expect((await post(`[${customer('C-1')},${customer('C-2', `{"name":"Bo","deep":${nested(20_000)}}`)},${customer('C-3')}]`)).statusCode).toBe(200);
  });

  it('answers each bad element of a batch with its index, message and fields, and accepts the rest', async () => {
    const res = await post(`[${customer('C-1')},{"id":"x","type":"customer.upserted"},${customer('C-3', '{"name":7}')}]`);
    expect(res.statusCode).toBe(202);
    const body = res.json<{ accepted: number; rejected: { index: number; message: string; fields: Record<string, string[]> }[] }>();
    expect(body.accepted).toBe(1);
    expect(body.rejected.map((r) => r.index)).toEqual([1, 2]);
    expect(Object.keys(body.rejected[0]!.fields)).toContain('occurred_at');
    expect(Object.keys(body.rejected[1]!.fields)).toContain('data.name');
  });

  it('answers every element of a batch in which none is valid, keeping the delivery', async () => {
    const res = await post(`[{"id":"x"},${customer('C-2', nested(100))}]`);
    expect(res.statusCode).toBe(202);
    const body = res.json<{ accepted: number; dead_lettered: number; rejected: { index: number; message: string }[] }>();
    expect(body).toMatchObject({ accepted: 0, dead_lettered: 1 });
    expect(body.rejected.map((r) => r.index)).toEqual([0, 1]);
    expect(body.rejected[1]!.message).toMatch(/nested deeper than 32 levels/);
  });

  it('answers 400 saying where when a single event is nested too deep, and queues nothing', async () => {
    const text = customer('C-9', `{"name":"Ada","x":${nested(1_000)}}`);
    const res = await post(text);
    expect(res.statusCode).toBe(400);
    const body = res.json<{ error: string; message: string; where: { byte: number } }>();
    expect(body.error).toBe('bad_request');
    expect(body.message).toMatch(/nested deeper than 32 levels at byte \d+/);
    // The first byte past the limit: the 33rd opening brace ("{" of the event is level 1, data level 2).
    expect(text[body.where.byte]).toBe('{');
    expect(await pipeline.queues.customers.getJobCounts('waiting')).toEqual({ waiting: 0 });
    expect(await pipeline.deadLetters.count()).toBe(0);
  });

  it('answers 400 to a batch over the element limit, naming the limit', async () => {
    const res = await post(`[${['A', 'B', 'C', 'D', 'E', 'F'].map((id) => customer(id)).join(',')}]`);
    expect(res.statusCode).toBe(400);
    expect(res.json<{ message: string }>().message).toMatch(/6 events.*at most 5/);
    expect(await pipeline.queues.customers.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });

  it('still keeps a signed body that is not JSON at all as a dead letter (202)', async () => {
    const res = await post('[{"id": not json');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 0, dead_lettered: 1 });
  });

  // Ids with a lone UTF-16 surrogate (JSON allows "\ud800") cannot be encoded into a Redis key
  // (encodeURIComponent throws a URIError): refused element by element, never a 5xx the ERP retries for ever.
  const refund = (externalId: string, invoiceId: string) =>
    `{"id":"erp-${externalId}","type":"refund.created","occurred_at":"2026-11-20T10:00:00Z","record":{"kind":"transaction","external_id":"${externalId}"},"data":{"invoice_external_id":"${invoiceId}","issued_at":"2026-11-20T10:00:00Z","currency":"EUR","amount":"10.00"}}`;

  it('answers a per-element error naming the field for each id with a lone surrogate, and accepts the good elements', async () => {
    const res = await post(`[${customer('C-1')},${customer('C-\\ud800')},${refund('refund-R-1', 'INV-\\udc00')}]`);
    expect(res.statusCode).toBe(202);
    const body = res.json<{ accepted: number; rejected: { index: number; message: string; fields: Record<string, string[]> }[] }>();
    expect(body.accepted).toBe(1);
    expect(body.rejected.map((r) => r.index)).toEqual([1, 2]);
    // customer('C-\ud800') also has the event id erp-C-\ud800
    expect(body.rejected.map((r) => Object.keys(r.fields).sort())).toEqual([['id', 'record.external_id'], ['data.invoice_external_id']]);
    for (const r of body.rejected) expect(Object.values(r.fields).flat().join(' ')).toMatch(/well-formed Unicode/);
  });

  it('keeps a single event with a lone-surrogate id as a dead letter naming the field, never a 5xx', async () => {
    const res = await post(customer('\\udbff'));
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 0, dead_lettered: 1 });
    const [entry] = await pipeline.deadLetters.list();
    expect(entry?.error).toMatchObject({ code: 'INVALID_PAYLOAD', fields: { 'record.external_id': [expect.stringMatching(/well-formed Unicode/)] } });
  });
});
