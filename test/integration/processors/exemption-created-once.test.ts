import { afterEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import type { Fault } from '../../helpers/model-engine.js';
import { startModelRig, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Exemptions have no key of their own in the tax engine: `POST /v1/exemptions/` is not idempotent,
 * and taxsync keeps a `create_pending` mark (the body sent) so a create whose answer was lost is
 * found among the exemptions before anything is created again (src/processors/exemption.ts). These
 * tests lose that answer and then let other things happen before the create is found: the version
 * dead-lettered and replayed, a deletion or a cancellation arriving. The engine must end with one
 * exemption (or none, once deleted), never a second one nor a deleted one left active.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
const CUSTOMER: RecordKey = { kind: 'customer', source: 'api', external_id: 'C-1' };
const EXEMPTION: RecordKey = { kind: 'exemption', source: 'api', external_id: 'EX-1' };
const event = (id: string, type: string, record: RecordKey, t: number, data: unknown) => CanonicalEvent.parse({ id, type, occurred_at: at(t), connector: 'erp', record, data });
const customer = () => event('c-1', 'customer.upserted', CUSTOMER, 1, { name: 'Acme Wholesale' });
const exemption = (t = 2) => event(`x-${t}`, 'exemption.upserted', EXEMPTION, t, { customer_external_id: 'C-1', country: 'US', jurisdictions: ['CA'], start_date: '2026-01-01', exemption_type: 'full' });

describe('an exemption whose create answer was lost', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });
  const live = () => [...rig!.engine.exemptions.values()].filter((e) => !e.deleted);

  it('is created once when the version is dead-lettered before the create was found, then replayed', async () => {
    // The create is applied but its answer lost; every later exemption write fails (500) until the
    // attempts run out: a dead letter. The service then works again and the operator replays it.
    let broken = true;
    rig = await startModelRig(redis.url, {
      queues: ['customers'],
      faults: (key, n): Fault => (!key.startsWith('exemption|') ? 'ok' : key === 'exemption|new' && n === 0 ? 'lost' : broken ? 'fail' : 'ok'),
    });
    await rig.accept(customer());
    await rig.accept(exemption());
    expect(await rig.settle([CUSTOMER, EXEMPTION])).toBe(true);
    expect((await rig.deadLetters()).map((e) => e.error.code)).toEqual(['API_SERVER_ERROR']);
    expect(live()).toHaveLength(1);

    broken = false;
    await rig.replayAll();
    expect(await rig.settle([CUSTOMER, EXEMPTION])).toBe(true);
    expect(await rig.deadLetters()).toEqual([]);
    expect(live()).toHaveLength(1);
    expect(live()[0]?.body).toMatchObject({ country: 'US', jurisdictions: ['CA'], exemption_status: 'active' });
  });

  it('is deleted when its deletion arrives before the create was recorded', async () => {
    // The worker is killed after the engine created the exemption, before taxsync marked it; the
    // deletion arrives meanwhile and is the newest state when the job runs again.
    rig = await startModelRig(redis.url, {
      queues: ['customers'],
      crashes: [{ point: 'before-mark', record: 'EX-1', nth: 0 }],
      onCrash: () => rig!.accept(event('x-del', 'exemption.deleted', EXEMPTION, 5, {})),
    });
    await rig.accept(customer());
    await rig.accept(exemption());
    expect(await rig.settle([CUSTOMER, EXEMPTION])).toBe(true);
    expect(rig.crashed).toHaveLength(1);
    expect(await rig.deadLetters()).toEqual([]);
    expect(live()).toEqual([]);
  });

  it('is cancelled when its cancellation arrives before the create was recorded', async () => {
    rig = await startModelRig(redis.url, {
      queues: ['customers'],
      crashes: [{ point: 'before-mark', record: 'EX-1', nth: 0 }],
      onCrash: () => rig!.accept(event('x-cancel', 'exemption.cancelled', EXEMPTION, 5, {})),
    });
    await rig.accept(customer());
    await rig.accept(exemption());
    expect(await rig.settle([CUSTOMER, EXEMPTION])).toBe(true);
    expect(rig.crashed).toHaveLength(1);
    expect(await rig.deadLetters()).toEqual([]);
    expect(live()).toHaveLength(1);
    expect(live()[0]?.body).toMatchObject({ jurisdictions: ['CA'], exemption_status: 'cancelled' });
  });
});
