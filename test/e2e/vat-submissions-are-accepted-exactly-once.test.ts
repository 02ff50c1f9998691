import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../src/api/index.js';
import { Secret } from '../../src/domain/secret.js';
import { CanonicalEvent } from '../../src/domain/events.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { testVariety } from '../helpers/emulator-variety.js';
import { VatSettings } from '../../src/mapping/vat-settings.js';
import { createVatHandler, createVatReferenceData } from '../../src/processors/vat.js';
import { createVatLedger } from '../../src/queue/vat-ledger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { ENTITY } from '../unit/emulator/helpers.js';
import { vatInvoice } from '../unit/mapping/vat-fixtures.js';
import { createPipeline, eventually, type Pipeline } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const COUNT = 500;

// Invariant 5 under faults: 30% of submissions answer 500 and 10% are processed but never
// answered (the connection drops). Every valid invoice must end up accepted exactly once.
describe('VAT submissions under server errors and dropped connections', () => {
  const ctx = useRedis();
  let emulator: Emulator & { url: string };
  let api: ApiClients;
  let pipeline: Pipeline;

  beforeEach(async () => {
    emulator = await startEmulator({ port: 0, host: '127.0.0.1', entities: [{ id: ENTITY, name: 'Beta GmbH' }], variety: testVariety() });
    api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
    await api.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY, registration_type: 'standard', date_of_registration: '2024-01-01' });
    pipeline = await createPipeline(ctx.url, ctx.prefix, { vat: true, retry: { attempts: 30, baseMs: 5, capMs: 50 } });
  });

  afterEach(async () => {
    await pipeline.close();
    await api.close();
    await emulator.close();
  });

  it('accepts every submission once and none twice', async () => {
    const settings = VatSettings.parse({ seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }], rates: { DE: { standard: '19.00' } } });
    const ledger = createVatLedger(pipeline.producerConnection, pipeline.keys, { leaseMs: 5_000 });
    const metrics = createMetrics({ defaultMetrics: false });
    await pipeline.startWorker(
      'vat-submissions',
      createVatHandler({ vat: api.vat, ledger, settings, metrics, records: pipeline.records, reference: createVatReferenceData(api.vat, settings, { ttlMs: 60_000 }) }),
      { concurrency: 8 },
    );
    emulator.faults.set(
      [
        { kind: 'error', route: 'vat.submit', rate: 0.3, status: 500 },
        { kind: 'drop', route: 'vat.submit', rate: 0.1 },
      ],
      7,
    );

    for (let i = 0; i < COUNT; i++) {
      const number = `INV-${String(i).padStart(4, '0')}`;
      const event = CanonicalEvent.parse({
        id: `erp-${number}`,
        type: 'invoice.upserted',
        occurred_at: '2025-03-02T10:00:00Z',
        connector: 'erp',
        record: { kind: 'transaction', source: 'api', external_id: number },
        data: vatInvoice({ number, lines: [{ unit_price: `${100 + i}.50`, quantity: '1', tax_rate: '0.19' }] }),
      });
      await pipeline.producer.accept({ events: [event] });
    }

    await eventually(async () => {
      let confirmed = 0;
      for await (const [, entry] of ledger.entries()) if (entry.state === 'confirmed') confirmed += 1;
      return confirmed === COUNT;
    }, 150_000);

    const accepted = new Map<string, number>();
    for (const { value } of emulator.state.vatTransactions.live()) accepted.set(value.invoice_number, (accepted.get(value.invoice_number) ?? 0) + 1);
    expect(accepted.size).toBe(COUNT);
    expect([...accepted.values()].every((n) => n === 1)).toBe(true);
    expect(await pipeline.deadLetters.count()).toBe(0);
    // The faults really happened: more submissions were attempted than accepted.
    const submits = emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit');
    expect(submits.length).toBeGreaterThan(COUNT);
    expect(submits.some((e) => e.outcome === 'dropped')).toBe(true);
    // A resend after a dropped answer met the duplicate check and was recorded as accepted.
    expect(submits.some((e) => e.status === 422)).toBe(true);
    const counted = Object.fromEntries((await metrics.vatSubmissions.get()).values.map((v) => [v.labels.outcome, v.value]));
    expect((counted.accepted ?? 0) + (counted.accepted_with_warnings ?? 0) + (counted.confirmed_by_duplicate ?? 0)).toBe(COUNT);
    expect(counted.unknown).toBeGreaterThan(0);
  }, 180_000);
});
