import { Decimal } from 'decimal.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/emulator/index.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpInvoice, type InvoiceLine } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const INVOICES = 30;
const ATTEMPTS = 12;

// Prices with cents, some of them awkward (0.01, x.99, x.05), times whole quantities.
function linesOf(i: number): InvoiceLine[] {
  const cents = String((i * 37) % 100).padStart(2, '0');
  return [
    { unit_price: `${10 + i}.${cents}`, quantity: String(1 + (i % 3)) },
    { unit_price: i % 2 === 0 ? '0.01' : '1234.05', quantity: '1' },
    { unit_price: '19.99', quantity: '7' },
  ];
}

const total = (lines: readonly InvoiceLine[]) => lines.reduce((sum, l) => sum.plus(new Decimal(l.unit_price).times(l.quantity)), new Decimal(0)).toFixed(2);

describe('5xx and 429 answers from the tax engine', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  it('are retried until every invoice arrives exactly as sent, waiting out Retry-After', async () => {
    // Seeded faults on every transaction upsert. Their totals are capped (`times`) below the
    // attempts a job has, so no record can run out of attempts whatever order the requests come in.
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      env: { TAXSYNC_MAX_ATTEMPTS: String(ATTEMPTS) },
      emulator: {
        seed: 42,
        faults: [
          { kind: 'error', route: 'transactions.upsert', rate: 0.3, status: 500, times: 6 },
          { kind: 'error', route: 'transactions.upsert', rate: 0.3, status: 503, times: 4 },
          { kind: 'rate_limit', route: 'transactions.upsert', rate: 0.15, retry_after_s: 1, times: 2 },
        ],
      },
    });
    const running = daemon;

    const sent = Array.from({ length: INVOICES }, (_, i) => ({ id: `INV-RETRY-${i}`, lines: linesOf(i) }));
    for (let batch = 0; batch < INVOICES; batch += 10) {
      const events = sent.slice(batch, batch + 10).map((s) => erpInvoice(s.id, 1, s.lines));
      const res = await running.post('erp', events);
      expect(res.status, await res.clone().text()).toBe(202);
    }

    const upserts = () => running.emulator.requestLog.entries().filter((e) => e.endpoint === 'transactions.upsert');
    const answered = (e: RequestLogEntry) => e.outcome === 'answered' && (e.status === 200 || e.status === 201);
    await eventually(() => new Set(upserts().filter(answered).map((e) => e.record?.key)).size === INVOICES, 25_000);
    await eventually(() => running.idle());

    // Every record exactly as sent: each line's price and quantity, and the totals to the cent.
    for (const { id, lines } of sent) {
      const tx = await running.api.tax.transactions.getByKey('api', id);
      expect(tx.transaction_type).toBe('invoice');
      const cents = (value: string | undefined) => (value === undefined ? undefined : new Decimal(value).toFixed(2));
      expect(tx.items?.map((item) => [cents(item.unit_price), item.quantity && new Decimal(item.quantity).toFixed(), cents(item.total_price)])).toEqual(
        lines.map((l) => [cents(l.unit_price), l.quantity, new Decimal(l.unit_price).times(l.quantity).toFixed(2)]),
      );
      expect(cents(tx.amounts?.total_items_amount), id).toBe(total(lines));
    }

    // The request log shows the retries: every fault that fired is a failed request of a record
    // that later succeeded, and nothing was dead-lettered.
    const rules = running.emulator.faults.list();
    const fired = (status: number) => upserts().filter((e) => e.status === status && e.faults.length > 0);
    expect(fired(500)).toHaveLength(rules[0]!.fired);
    expect(fired(503)).toHaveLength(rules[1]!.fired);
    expect(fired(429)).toHaveLength(rules[2]!.fired);
    for (const rule of rules) expect(rule.fired, `${rule.kind} ${rule.status ?? ''}`).toBeGreaterThan(0);

    const byRecord = new Map<string, RequestLogEntry[]>();
    for (const e of upserts()) byRecord.set(e.record!.key, [...(byRecord.get(e.record!.key) ?? []), e]);
    expect(byRecord.size).toBe(INVOICES);
    for (const [key, requests] of byRecord) {
      expect(answered(requests.at(-1)!), key).toBe(true);
      expect(requests.length, key).toBeLessThanOrEqual(ATTEMPTS + 2);
    }
    const retried = [...byRecord.values()].filter((requests) => requests.length > 1);
    expect(retried.length).toBeGreaterThan(0);

    // A 429 pauses the queue for at least its Retry-After before that record is sent again.
    for (const limited of fired(429)) {
      const next = byRecord.get(limited.record!.key)!.find((e) => e.id > limited.id)!;
      expect(next.start_ms - limited.end_ms!).toBeGreaterThanOrEqual(950);
    }

    const counts = await running.queues['dead-letter'].getJobCounts('waiting');
    expect(counts.waiting).toBe(0);
  });
});
