import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { readTrace } from '../../src/queue/trace.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpInvoice, erpRefund } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

describe('a request the tax engine rejects with 422', () => {
  const ctx = useRedis();
  let daemon: Daemon;

  beforeEach(async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await daemon.stop();
  });

  it('lands in the dead-letter queue at once, with its field errors and the exchange without the token', async () => {
    const res = await daemon.post('erp', erpInvoice('INV-422', 1, [{ unit_price: '100.00', quantity: '2' }]));
    expect(res.status).toBe(202);
    let invoiceId = '';
    await eventually(async () => {
      invoiceId = (await daemon.api.tax.transactions.getByKey('api', 'INV-422').catch(() => undefined))?.id ?? '';
      return invoiceId !== '';
    });

    // Someone refunds 80 % of the invoice directly in the tax engine. taxsync's refund ledger only
    // knows its own refunds, so its mapping lets a 50 % refund through; the engine refuses it
    // because the refunds would add up past the whole.
    await daemon.api.tax.transactions.upsert({
      source: 'api',
      external_id: 'refund-manual-1',
      transaction_type: 'refund',
      created_from: invoiceId,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.8' },
      items: [{ unit_price: '160.00' }],
    });
    expect((await daemon.post('erp', erpRefund('refund-R-422', 2, 'INV-422', '100.00'))).status).toBe(202);

    const deadLetters = createDeadLetterStore(daemon.queues['dead-letter']);
    await eventually(async () => (await deadLetters.count()) === 1);
    const [entry] = await deadLetters.list();
    expect(entry).toMatchObject({
      queue: 'transactions',
      record: { kind: 'transaction', source: 'api', external_id: 'refund-R-422' },
      event: { id: 'erp-refund-R-422-v2', type: 'refund.created' },
      error: { code: 'API_INVALID', retryable: false },
      attempts: 1,
    });
    expect(entry!.error.fields?.['refund_info.refund_linked_percentage']).toEqual([expect.stringContaining('more than the whole')]);
    expect(entry!.http?.request).toMatchObject({ method: 'PUT', url: `${daemon.emulator.url}/v1/transactions/` });
    expect(JSON.parse(entry!.http!.request.body!)).toMatchObject({
      external_id: 'refund-R-422',
      created_from: invoiceId,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5' },
    });
    expect(entry!.http?.response?.status).toBe(422);
    const text = JSON.stringify(entry);
    expect(text).not.toMatch(/bearer|authorization/i);
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\./); // no JWT
    expect(text).not.toContain(DEFAULT_CLIENT.clientSecret);

    // Sent once, never retried (once its job is over); the trace says why.
    await eventually(() => daemon.idle());
    const sends = daemon.emulator.requestLog.entries().filter((e) => e.endpoint === 'transactions.upsert' && e.record?.key === 'transaction:api:refund-R-422');
    expect(sends.map((e) => e.status)).toEqual([422]);
    const trace = await readTrace(ctx.redis, createKeys(ctx.prefix), 'transaction|api|refund-R-422');
    expect(trace.at(-1)).toMatchObject({ step: 'dead-lettered', code: 'API_INVALID' });
  });
});
