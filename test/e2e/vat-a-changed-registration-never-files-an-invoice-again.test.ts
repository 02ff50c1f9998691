import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CanonicalEventInput } from '../../src/domain/events.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { VatSettings } from '../../src/mapping/vat-settings.js';
import { createVatReferenceData, type VatReferenceData } from '../../src/processors/vat.js';
import { useRedis } from '../helpers/redis.js';
import { RIG_ENTITY, createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * An invoice's entity jurisdiction is fixed once a submission of it may have landed, like a
 * record's source (DESIGN.md invariants 3 and 5). Registrations configured by taxable
 * jurisdiction are resolved again every hour (TAXSYNC_VAT_REFERENCE_TTL_S); when the one an
 * invoice was filed under is closed and replaced (another entity takes the business over), or the
 * ERP names another entity jurisdiction, a later version of that invoice maps to the new one.
 * Planned as a new part there, it was filed a second time — two accepted POSTs for one invoice —
 * beside a correction reversing the first. It must stay where it was filed: an update that changes
 * nothing files nothing; one that changes its VAT is stated against the filed submission, and
 * nothing is submitted under the new entity jurisdiction (docs/decisions.md).
 */

const SUCCESSOR = '22222222-3333-4444-8555-666666666666';

type Rate = 19 | 7;
type Line = readonly [cents: number, rate: Rate];
/** Half-up cents of VAT at a whole-percent rate. */
const vatCents = (net: number, rate: Rate) => Math.floor((net * rate + 50) / 100);
const euros = (cents: number) => `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
const cents = (decimal: string) => Math.round(Number(decimal) * 100);
/** What the lines require, by hand: per rate, net = Σ lines, vat = net × rate half-up. */
function required(lines: readonly Line[]): { net: number; vat: number; gross: number } {
  const byRate = new Map<Rate, number>();
  for (const [c, rate] of lines) byRate.set(rate, (byRate.get(rate) ?? 0) + c);
  let net = 0;
  let vat = 0;
  for (const [rate, n] of byRate) {
    net += n;
    vat += vatCents(n, rate);
  }
  return { net, vat, gross: net + vat };
}

describe('a changed registration never files an invoice again', () => {
  const ctx = useRedis();
  let rig: VatRig;
  let first: string;
  let successor: string;

  beforeEach(async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    const registrations = [];
    for await (const r of rig.api.vat.registrations.iterate()) registrations.push(r);
    first = registrations[0]!.entity_jurisdiction!;
  });
  afterEach(async () => {
    await rig.close();
  });

  /** The German registration closed, another entity's opened: resolved again, DE is the successor's. */
  async function replaceRegistration(): Promise<VatReferenceData> {
    const [old] = (await rig.api.vat.registrations.list({ entity: RIG_ENTITY })).results;
    await rig.api.vat.registrations.patch(old!.id, { date_registration_closed: '2025-03-10' });
    const created = await rig.api.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: SUCCESSOR, registration_type: 'standard', date_of_registration: '2025-03-10' });
    successor = created.entity_jurisdiction!;
    expect(successor).not.toBe(first);
    return createVatReferenceData(rig.api.vat, rig.settings, { ttlMs: 3_600_000 });
  }

  it('files an invoice once when its registration is closed and replaced, and states its change against the filed submission', async () => {
    const record = vatRecord('INV-R1');
    await rig.accept(invoiceEvent('INV-R1', 1, [['100.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');

    const reference = await replaceRegistration();
    const handler = rig.handler({ reference });
    // Paid: nothing else changes.
    await rig.accept(invoiceEvent('INV-R1', 2, [['100.00', '0.19']], { status: 'paid' }));
    expect((await rig.run(record, handler)).kind).toBe('applied');
    // Increased to 120.00: +20.00 net, +3.80 VAT (20.00 × 0.19), stated where it was filed.
    await rig.accept(invoiceEvent('INV-R1', 3, [['120.00', '0.19']]));
    expect((await rig.run(record, handler)).kind).toBe('dead-lettered');

    const held = rig.emulator.state.vatTransactions.live().map((t) => t.value).filter((t) => t.invoice_number.startsWith('INV-R1'));
    expect(held.map((t) => `${t.entity_jurisdiction} ${t.invoice_number} ${t.net}/${t.vat}`)).toEqual([`${first} INV-R1 100.00/19.00`]);
    const letters = await rig.deadLettersOf(record);
    expect(letters.map((l) => l.error.code)).toEqual(['VAT_CORRECTION_REQUIRED']);
    expect(letters[0]!.error.fields).toMatchObject({ net: ['INV-R1: 20.00'], vat: ['INV-R1: 3.80'], gross: ['INV-R1: 23.80'] });
    expect(letters[0]!.error.message).toContain(first);
    expect(letters[0]!.error.message).toContain(successor);
  });

  const lines = fc.array(fc.tuple(fc.integer({ min: 1, max: 50_000 }), fc.constantFrom<Rate>(19, 7)), { minLength: 1, maxLength: 3 });
  const laterVersion: fc.Arbitrary<Line[] | 'same'> = fc.oneof({ weight: 1, arbitrary: fc.constant('same' as const) }, { weight: 3, arbitrary: lines });

  it('never files an invoice under a second entity jurisdiction, and states exactly what changed against the first', async () => {
    let run = 0;
    let moved: VatReferenceData | undefined;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          increases: fc.constantFrom('manual' as const, 'supplement' as const),
          by: fc.constantFrom('registration' as const, 'erp' as const),
          versions: fc.array(laterVersion, { minLength: 1, maxLength: 3 }),
        }),
        async ({ increases, by, versions }) => {
          run += 1;
          const number = `INV-P${run}`;
          const record = vatRecord(number);
          const settings = VatSettings.parse({ ...rig.settings, increases });
          const before = rig.handler({ settings });
          // Filed first under the first registration: 100.00 at 19 % (19.00 VAT).
          const filed: Line[] = [[10_000, 19]];
          const event = (version: number, ls: readonly Line[]): CanonicalEventInput => {
            const base = invoiceEvent(number, version, ls.map(([c, rate]) => [euros(c), rate === 19 ? '0.19' : '0.07'] as const));
            const data = base.data as Record<string, unknown>;
            return by === 'erp' ? ({ ...base, data: { ...data, vat: { entity_jurisdiction: successor } } } as CanonicalEventInput) : base;
          };
          await rig.accept(invoiceEvent(number, 1, [['100.00', '0.19']]));
          expect((await rig.run(record, before)).kind).toBe('applied');

          moved ??= await replaceRegistration();
          // The registration replaced (resolved again), or the ERP naming the successor's entity jurisdiction.
          const after = by === 'registration' ? rig.handler({ settings, reference: moved }) : before;
          let last: Line[] = filed;
          for (const [i, v] of versions.entries()) {
            last = v === 'same' ? filed : v;
            await rig.accept(event(i + 2, last));
            const result = await rig.run(record, after);
            expect(['applied', 'dead-lettered'], JSON.stringify(result)).toContain(result.kind);
          }

          const what = JSON.stringify({ increases, by, versions });
          const held = rig.emulator.state.vatTransactions.live().map((t) => t.value).filter((t) => t.invoice_number === number || t.invoice_number.startsWith(`${number} (`));
          expect(held.map((t) => `${t.entity_jurisdiction} ${t.invoice_number} ${t.net}/${t.vat}`), `${what}: filed once, where it was filed`).toEqual([
            `${first} ${number} 100.00/19.00`,
          ]);
          const entries = await rig.ledger.forRecord(recordKeyString(record));
          expect(entries.map((e) => `${e.entity_jurisdiction} ${e.state}`), what).toEqual([`${first} confirmed`]);

          const want = required(last);
          const have = required(filed);
          const letters = (await rig.deadLettersOf(record)).sort((a, b) => b.last_failed_at.localeCompare(a.last_failed_at));
          expect(letters.every((l) => l.error.code === 'VAT_CORRECTION_REQUIRED'), `${what}: ${letters.map((l) => l.error.code).join()}`).toBe(true);
          const newest = letters.find((l) => (l.event as { id?: string } | null)?.id === `${number}-v${versions.length + 1}`);
          const unchanged = last.length === 1 && last[0]![0] === 10_000 && last[0]![1] === 19;
          if (unchanged) {
            expect(newest, `${what}: nothing changed, nothing to state`).toBeUndefined();
            return;
          }
          expect(newest, `${what}: the change is stated`).toBeDefined();
          const stated = (field: 'net' | 'vat' | 'gross') => (newest!.error.fields?.[field] ?? []).reduce((sum, m) => sum + cents(/: (-?\d+\.\d{2})$/.exec(m)?.[1] ?? 'NaN'), 0);
          expect({ net: stated('net'), vat: stated('vat'), gross: stated('gross') }, `${what}: the difference against the filing`).toEqual({
            net: want.net - have.net,
            vat: want.vat - have.vat,
            gross: want.gross - have.gross,
          });
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
