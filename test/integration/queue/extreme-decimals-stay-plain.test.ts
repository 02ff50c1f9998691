import type { Queue } from 'bullmq';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapErpBody } from '../../../src/connectors/erp/map.js';
import { CanonicalEvent, type CanonicalEventInput } from '../../../src/domain/events.js';
import { recordKeyString } from '../../../src/domain/record-key.js';
import { DEFAULT_MAPPING_SETTINGS, mapInvoice, mapVatSubmission } from '../../../src/mapping/index.js';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys, type Keys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer, type Producer } from '../../../src/queue/producer.js';
import { createRecordStore, type RecordStore } from '../../../src/queue/record-state.js';
import { uniquePrefix } from '../../helpers/redis.js';
import { inject } from 'vitest';
import { TYPES, vatCtx } from '../../unit/mapping/vat-fixtures.js';

// Finding 6 (issue 15): decimal.js writes extreme exponents in exponent notation ("1e-31"), which the
// canonical schema then refuses when the job reads its event back: a JOB_INVALID dead letter that no
// replay can fix. Amounts are bounded at ingest (docs/events.md: at most 18 digits before the point
// and 15 after it) and every decimal leaves taxsync in plain notation.

/** A JSON string that is a number in exponent notation ("1e-31", "2.5E+40"); UUIDs such as b2b5a1e5-… are not. */
const EXPONENT = /"-?\d+(\.\d+)?[eE][+-]?\d+"/;
const runs = Number(process.env.TAXSYNC_MODEL_RUNS ?? 200);

function invoice(unitPrice: string | Decimal, quantity: string | Decimal = '1', externalId = 'INV-X'): CanonicalEventInput {
  return {
    id: `erp-${externalId}-${String(unitPrice)}-${String(quantity)}`,
    type: 'invoice.upserted',
    occurred_at: '2025-03-02T10:00:00Z',
    connector: 'erp',
    record: { kind: 'transaction', source: 'api', external_id: externalId },
    data: {
      number: externalId,
      issued_at: '2025-03-02T10:00:00+01:00',
      status: 'active',
      currency: 'EUR',
      tax_inclusive: false,
      customer: { external_id: 'C-1', name: 'Acme GmbH', tax_number: 'DE123456789' },
      addresses: { billing: { country: 'DE' } },
      lines: [{ unit_price: unitPrice, quantity: quantity, tax_rate: '0.19' }],
    },
  };
}

/** A decimal string with `int` digits before the point (no leading zeros) and `frac` after it. */
const decimalString = (maxInt: number, maxFrac: number) =>
  fc
    .tuple(fc.integer({ min: 0, max: maxInt }), fc.integer({ min: 0, max: maxFrac }), fc.boolean())
    .chain(([intDigits, fracDigits, tiny]) =>
      fc
        .tuple(
          fc.stringMatching(new RegExp(`^[1-9][0-9]{${Math.max(intDigits - 1, 0)}}$`)),
          fc.stringMatching(new RegExp(`^[0-9]{${fracDigits}}$`)),
        )
        // `tiny`: zeros then one digit, the smallest amounts of each scale (0.000…01).
        .map(([i, f]) => `${intDigits === 0 ? '0' : i}${fracDigits === 0 ? '' : `.${tiny ? `${'0'.repeat(fracDigits - 1)}1` : f}`}`),
    );

describe('decimals keep plain notation from ingest to every body', () => {
  let redis: Redis;
  let queues: Record<QueueName, Queue>;
  let producer: Producer;
  let records: RecordStore;
  let keys: Keys;

  beforeAll(async () => {
    const prefix = uniquePrefix();
    redis = createRedis(inject('redisUrl'), 'producer');
    await new Promise((resolve) => redis.once('ready', resolve));
    queues = createQueues(redis, prefix);
    keys = createKeys(prefix);
    producer = createProducer({
      queues,
      connection: redis,
      keys,
      deadLetters: createDeadLetterStore(queues['dead-letter']),
      trace: { maxEntries: 0, maxAgeMs: 60_000 },
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
    });
    records = createRecordStore(redis, keys);
  });
  afterAll(async () => {
    const stream = redis.scanStream({ match: `${keys.prefix}*`, count: 500 });
    for await (const found of stream as AsyncIterable<string[]>) if (found.length > 0) await redis.unlink(...found);
    await closeQueues(queues);
    redis.disconnect();
  });

  it('stores and reads back every amount within the bound in plain notation, and the bodies built from it too', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(decimalString(18, 15), decimalString(3, 15), async (price, quantity) => {
        const externalId = `INV-${n++}`;
        const event = CanonicalEvent.parse(invoice(price, quantity, externalId));
        await producer.accept({ events: [event] });
        const stored = await redis.get(keys.event(recordKeyString(event.record)));
        expect(stored).not.toMatch(EXPONENT);
        const state = await records.read(event.record);
        expect(state.event?.id).toBe(event.id);
        // What the job reads back is the amount as written: no digit lost, none added.
        const line = (state.event?.data as { lines: { unit_price: Decimal; quantity: Decimal }[] }).lines[0]!;
        expect(line.unit_price.equals(new Decimal(price))).toBe(true);
        expect(JSON.stringify(state.event)).not.toMatch(EXPONENT);
        if (state.event?.type !== 'invoice.upserted') throw new Error('unexpected type');
        const tax = mapInvoice(state.event.data, { key: event.record, settings: DEFAULT_MAPPING_SETTINGS });
        expect(JSON.stringify(tax)).not.toMatch(EXPONENT);
        const vat = mapVatSubmission(state.event.data, vatCtx({ key: event.record, transactionTypes: TYPES }));
        expect(JSON.stringify(vat)).not.toMatch(EXPONENT);
      }),
      { numRuns: runs, verbose: true },
    );
  });

  it('writes a Decimal made by any decimal.js constructor in plain notation', () => {
    // decimal.js's own default writes 1e-8 below 1e-7 (toExpNeg −7).
    const event = CanonicalEvent.parse(invoice(new Decimal('0.00000001'), new Decimal('0.000000002')));
    expect(JSON.stringify(event)).toContain('"unit_price":"0.00000001"');
    expect(JSON.stringify(event)).toContain('"quantity":"0.000000002"');
  });

  it.each([
    ['1'.padEnd(19, '0'), 'more than 18 digits before the decimal point'],
    [`0.${'0'.repeat(15)}1`, 'more than 15 digits after the decimal point'],
    [`1${'0'.repeat(40)}`, 'more than 18 digits before the decimal point'],
    [`0.${'0'.repeat(40)}1`, 'more than 15 digits after the decimal point'],
  ])('refuses %s at ingest, naming the field (an operator can edit and replay it)', (amount, why) => {
    const result = mapErpBody(invoice(amount), { source: 'api' });
    expect(result.kind).toBe('invalid');
    const fields = result.kind === 'invalid' ? (result.fields ?? {}) : {};
    expect(Object.keys(fields)).toEqual(['data.lines[0].unit_price']);
    expect(fields['data.lines[0].unit_price']?.join(' ')).toContain(why);
  });
});
