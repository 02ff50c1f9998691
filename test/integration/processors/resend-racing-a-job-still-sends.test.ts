import { afterEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import { createAuditLog } from '../../../src/queue/audit.js';
import { resendRecord } from '../../../src/queue/resend.js';
import { startModelRig, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * `taxsync resend` sends a record's newest version whatever its body (docs/operations.md, "Sending
 * a record again"): an operator uses it when the engine's copy was changed or deleted outside
 * taxsync. It must send also when it races a job of the record that already decided, from the
 * state it read before the resend, that the body is the one last accepted (skip unchanged).
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const CUSTOMER: RecordKey = { kind: 'customer', source: 'api', external_id: 'C-1' };
const customer = (t: number, name: string) =>
  CanonicalEvent.parse({ id: `c-${t}`, type: 'customer.upserted', occurred_at: new Date(BASE + t * 1000).toISOString(), connector: 'erp', record: CUSTOMER, data: { name } });

describe('taxsync resend racing a job of the record', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('still sends the newest version when the job had decided to skip it as unchanged', async () => {
    let resent = false;
    const made = await startModelRig(redis.url, {
      queues: ['customers'],
      // The job of version 2 (the same body as version 1: skipped) is about to mark it applied
      // when the operator resends the record.
      beforeMark: async (_record, seq) => {
        if (seq !== 2 || resent) return;
        resent = true;
        const audit = createAuditLog(made.pipeline.producerConnection, made.pipeline.keys, { actor: 'operator' });
        expect(await resendRecord({ queues: made.pipeline.queues, keys: made.pipeline.keys, audit, trace: { maxEntries: 50, maxAgeMs: 600_000 } }, CUSTOMER)).toBe('queued');
      },
    });
    rig = made;
    await rig.accept(customer(1, 'Ada'));
    expect(await rig.settle([CUSTOMER])).toBe(true);
    // Someone changes the customer in the engine behind taxsync's back.
    rig.engine.customers.get('api|C-1')!.body.name = 'changed outside taxsync';
    await rig.accept(customer(2, 'Ada'));
    expect(await rig.settle([CUSTOMER])).toBe(true);

    expect(resent).toBe(true);
    expect(rig.engine.customers.get('api|C-1')?.body.name).toBe('Ada');
  });
});
