import { afterEach, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/queue/keys.js';
import { createRecordStore } from '../../src/queue/record-state.js';
import { readTrace } from '../../src/queue/trace.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpCustomer, erpExemption } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const CERTIFICATE = '0b7e6c5d-4f3a-4b2c-9d1e-8a7f6e5d4c3b';
const EXEMPTION = { kind: 'exemption' as const, source: 'api', external_id: 'EX-LOST-1' };

describe('an exemption create whose answer was lost', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  it('does not create a second exemption when it is retried', async () => {
    // The emulator creates the exemption, then drops the connection instead of answering.
    daemon = await startDaemon(ctx.url, ctx.prefix, { emulator: { faults: [{ kind: 'drop', route: 'exemptions.create', times: 1 }] } });
    const running = daemon;
    const res = await running.post('erp', [
      erpCustomer('C-EXEMPT', 1),
      erpExemption(EXEMPTION.external_id, 2, 'C-EXEMPT', { certificate_id: CERTIFICATE, jurisdictions: ['NY'] }),
    ]);
    expect(res.status).toBe(202);

    const records = createRecordStore(ctx.redis, createKeys(ctx.prefix));
    await eventually(async () => {
      const state = await records.read(EXEMPTION);
      return state.seq > 0 && state.appliedSeq === state.seq;
    });
    await eventually(() => running.idle());

    const customer = await running.api.tax.customers.getByKey('api', 'C-EXEMPT');
    const exemptions = [];
    for await (const exemption of running.api.tax.exemptions.iterate()) {
      if (exemption.customer_id === customer.id && exemption.certificate_id === CERTIFICATE) exemptions.push(exemption);
    }
    expect(exemptions).toHaveLength(1);
    expect(exemptions[0]).toMatchObject({ country: 'US', jurisdictions: ['NY'], start_date: '2026-01-01', exemption_type: 'full' });

    // One create (its answer dropped), then the retry found it and updated it instead.
    const log = running.emulator.requestLog.entries();
    expect(log.filter((e) => e.endpoint === 'exemptions.create').map((e) => [e.outcome, e.status])).toEqual([['dropped', 201]]);
    const updates = log.filter((e) => e.endpoint === 'exemptions.update');
    expect(updates.map((e) => [e.status, e.record?.id])).toEqual([[200, exemptions[0]!.id]]);

    const state = await records.read(EXEMPTION);
    expect(state.taxId).toBe(exemptions[0]!.id);
    expect(state.createPending).toBeUndefined();
    const trace = await readTrace(ctx.redis, createKeys(ctx.prefix), 'exemption|api|EX-LOST-1');
    expect(trace.map((t) => t.step)).toContain('retry');
    expect(trace.some((t) => t.detail?.includes('from an earlier create whose answer was lost'))).toBe(true);
  });

  it('finds the lost create also when the exemption changed before the retry', async () => {
    // The create waits 300 ms before it is processed (and then loses its answer): the change
    // arrives meanwhile, so the retry sends a body other than the one that created the exemption.
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      emulator: {
        faults: [
          { kind: 'latency', route: 'exemptions.create', ms: 300, times: 1 },
          { kind: 'drop', route: 'exemptions.create', times: 1 },
        ],
      },
    });
    const running = daemon;
    await running.post('erp', [erpCustomer('C-CHANGED', 1), erpExemption('EX-CHANGED', 2, 'C-CHANGED', { jurisdictions: ['NY'] })]);
    await eventually(() => running.emulator.requestLog.entries().some((e) => e.endpoint === 'exemptions.create'));
    await running.post('erp', erpExemption('EX-CHANGED', 3, 'C-CHANGED', { jurisdictions: ['NY', 'NJ'] }));
    const records = createRecordStore(ctx.redis, createKeys(ctx.prefix));
    await eventually(async () => {
      const state = await records.read({ kind: 'exemption', source: 'api', external_id: 'EX-CHANGED' });
      return state.seq === 2 && state.appliedSeq === 2;
    });
    await eventually(() => running.idle());

    const customer = await running.api.tax.customers.getByKey('api', 'C-CHANGED');
    const held = [];
    for await (const exemption of running.api.tax.exemptions.iterate()) if (exemption.customer_id === customer.id) held.push(exemption);
    expect(held.map((e) => e.jurisdictions)).toEqual([['NY', 'NJ']]);
    expect(running.emulator.requestLog.entries().filter((e) => e.endpoint === 'exemptions.create').map((e) => e.outcome)).toEqual(['dropped']);
    const trace = await readTrace(ctx.redis, createKeys(ctx.prefix), 'exemption|api|EX-CHANGED');
    expect(trace.some((t) => t.detail?.includes('from an earlier create whose answer was lost'))).toBe(true);
  });

  it('does not take over another exemption of the same customer that looks alike', async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix);
    const running = daemon;
    const records = createRecordStore(ctx.redis, createKeys(ctx.prefix));
    const applied = (external_id: string) => async () => {
      const state = await records.read({ kind: 'exemption', source: 'api', external_id });
      return state.seq > 0 && state.appliedSeq === state.seq;
    };
    // Same customer, country, start date and type; no certificate (or one that is not a UUID,
    // which is not sent): only the jurisdictions tell them apart.
    await running.post('erp', [erpCustomer('C-ALIKE', 1), erpExemption('EX-NY', 2, 'C-ALIKE', { jurisdictions: ['NY'], certificate_id: 'CERT-NY' })]);
    await eventually(applied('EX-NY'));
    running.emulator.faults.add({ kind: 'drop', route: 'exemptions.create', times: 1 });
    await running.post('erp', erpExemption('EX-CA', 3, 'C-ALIKE', { jurisdictions: ['CA'], certificate_id: 'CERT-CA' }));
    await eventually(applied('EX-CA'));
    await eventually(() => running.idle());

    const customer = await running.api.tax.customers.getByKey('api', 'C-ALIKE');
    const held = new Map<string, string[] | undefined>();
    for await (const exemption of running.api.tax.exemptions.iterate()) {
      if (exemption.customer_id === customer.id) held.set(exemption.id, exemption.jurisdictions);
    }
    const ny = (await records.read({ kind: 'exemption', source: 'api', external_id: 'EX-NY' })).taxId!;
    const ca = (await records.read({ kind: 'exemption', source: 'api', external_id: 'EX-CA' })).taxId!;
    expect(ny).not.toBe(ca);
    expect(Object.fromEntries(held)).toEqual({ [ny]: ['NY'], [ca]: ['CA'] });
    expect(running.emulator.requestLog.entries().filter((e) => e.endpoint === 'exemptions.create').map((e) => e.outcome)).toEqual(['answered', 'dropped']);
  });
});
