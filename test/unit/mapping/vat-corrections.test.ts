import { describe, expect, it } from 'vitest';
import type { VatTransactionRequest } from '../../../src/api/schemas/vat.js';
import { describeCorrections, mapVatSubmission, planVat, refundCorrection, type VatPlanInput } from '../../../src/mapping/vat/index.js';
import { checkBody } from '../../../src/mapping/vat/submission.js';
import { refundData } from './helpers.js';
import { TODAY, TYPES, bodies, vatCtx, vatInvoice } from './vat-fixtures.js';

const line = (unit_price: string, tax_rate: string) => ({ unit_price, quantity: '1', tax_rate });
const mapped = (...lines: ReturnType<typeof line>[]) => bodies(mapVatSubmission(vatInvoice({ lines }), vatCtx()));
const check = (body: VatTransactionRequest) => checkBody(body, { today: TODAY, knownTypeIds: new Set(TYPES.map((t) => t.id)), tolerance: '0.01' });
const plan = (input: Partial<VatPlanInput>) => planVat({ target: [], filed: [], claimed: [], increases: 'manual', check, ...input });
const money = (c: { net: { toFixed(n: number): string }; vat: { toFixed(n: number): string }; gross: { toFixed(n: number): string } }) => ({
  net: c.net.toFixed(2),
  vat: c.vat.toFixed(2),
  gross: c.gross.toFixed(2),
});

describe('planVat: what a changed invoice means for what is filed', () => {
  const filed100 = mapped(line('100', '0.19')).map((body) => ({ body }));

  it('files nothing again when the filed part is unchanged', () => {
    expect(plan({ target: mapped(line('100', '0.19')), filed: filed100 })).toEqual({ submit: [], withdraw: [], corrections: [], unchanged: ['INV-1001'] });
  });

  it('states a reduction exactly: 100.00 → 80.00 at 19% is −20.00 net, −3.80 VAT (80 × 0.19 = 15.20; 19.00 − 15.20), −23.80 gross', () => {
    const result = plan({ target: mapped(line('80', '0.19')), filed: filed100 });
    expect(result.submit).toEqual([]);
    expect(result.corrections.map((c) => ({ number: c.number, ...money(c.difference) }))).toEqual([{ number: 'INV-1001', net: '-20.00', vat: '-3.80', gross: '-23.80' }]);
  });

  it('states an increase as a correction by default ("manual"), and files it as a supplement with vat.increases "supplement"', () => {
    const target = mapped(line('150', '0.19'));
    // 150 × 0.19 = 28.50; 28.50 − 19.00 = 9.50; 50.00 + 9.50 = 59.50
    expect(money(plan({ target, filed: filed100 }).corrections[0]!.difference)).toEqual({ net: '50.00', vat: '9.50', gross: '59.50' });
    const supplemented = plan({ target, filed: filed100, increases: 'supplement' });
    expect(supplemented.corrections).toEqual([]);
    expect(supplemented.submit).toEqual([
      { body: { ...target[0], invoice_number: 'INV-1001 (supplement 1)', net: '50.00', vat: '9.50', gross: '59.50' }, supplementOf: 'INV-1001' },
    ]);
  });

  it('counts filed supplements: a second increase is supplement 2 for the rest, a decrease below them a correction of the whole', () => {
    const supplement = { body: { ...filed100[0]!.body, invoice_number: 'INV-1001 (supplement 1)', net: '50.00', vat: '9.50', gross: '59.50' }, supplementOf: 'INV-1001' };
    const filed = [...filed100, supplement];
    const more = plan({ target: mapped(line('200', '0.19')), filed, increases: 'supplement' });
    // filed 150.00 / 28.50; now 200 → 38.00: +50.00, +9.50
    expect(more.submit.map((s) => [s.body.invoice_number, s.body.net, s.body.vat])).toEqual([['INV-1001 (supplement 2)', '50.00', '9.50']]);
    const less = plan({ target: mapped(line('120', '0.19')), filed, increases: 'supplement' });
    // filed 150.00 / 28.50 / 178.50; now 120.00 / 22.80 / 142.80
    expect(money(less.corrections[0]!.difference)).toEqual({ net: '-30.00', vat: '-5.70', gross: '-35.70' });
  });

  it('states a correction per filed submission: a void reverses the part and each of its supplements on its own line', () => {
    const supplement = { body: { ...filed100[0]!.body, invoice_number: 'INV-1001 (supplement 1)', net: '50.00', vat: '9.50', gross: '59.50' }, supplementOf: 'INV-1001' };
    const result = plan({ target: [], reason: 'the invoice was cancelled (voided)', filed: [...filed100, supplement], increases: 'supplement' });
    const { fields } = describeCorrections('VAT for invoice INV-1001', result.corrections);
    // 100.00 / 19.00 / 119.00 under INV-1001, 50.00 / 9.50 / 59.50 under its supplement
    expect(fields).toMatchObject({
      net: ['INV-1001 (supplement 1): -50.00', 'INV-1001: -100.00'],
      vat: ['INV-1001 (supplement 1): -9.50', 'INV-1001: -19.00'],
      gross: ['INV-1001 (supplement 1): -59.50', 'INV-1001: -119.00'],
    });
  });

  it('takes a reduction off the newest submission first, never more than it filed', () => {
    const s1 = { body: { ...filed100[0]!.body, invoice_number: 'INV-1001 (supplement 1)', net: '20.00', vat: '3.80', gross: '23.80' }, supplementOf: 'INV-1001' };
    const s2 = { body: { ...filed100[0]!.body, invoice_number: 'INV-1001 (supplement 2)', net: '30.00', vat: '5.70', gross: '35.70' }, supplementOf: 'INV-1001' };
    // Filed 100 + 20 + 30 = 150.00 / 28.50; now 110.00 / 20.90: −40.00 / −7.60 = all of supplement 2, 10.00 / 1.90 of supplement 1.
    const result = plan({ target: mapped(line('110', '0.19')), filed: [...filed100, s2, s1], increases: 'supplement' });
    expect(result.corrections.flatMap((c) => c.submissions.map((s) => [s.number, ...Object.values(money(s.difference))]))).toEqual([
      ['INV-1001 (supplement 2)', '-30.00', '-5.70', '-35.70'],
      ['INV-1001 (supplement 1)', '-10.00', '-1.90', '-11.90'],
    ]);
    // An increase is added to the part's first submission.
    const more = plan({ target: mapped(line('120', '0.19')), filed: filed100 });
    expect(more.corrections.flatMap((c) => c.submissions.map((s) => [s.number, s.difference.net.toFixed(2)]))).toEqual([['INV-1001', '20.00']]);
  });

  it('states a refund of a split invoice against the part whose rate its tax reproduces', () => {
    const split = mapped(line('100', '0.19'), line('50', '0.07')).map((body) => ({ body }));
    // 5.00 at 7% = 0.35: the reduced part; at 19% it would be 0.95.
    const c = refundCorrection(refundData({ invoice_external_id: 'INV-1001', currency: 'EUR', amount: '5', tax_amount: '0.35' }), split, 'refund');
    expect(describeCorrections('VAT for refund R', [c]).fields).toMatchObject({ net: ['INV-1001 (7.00% reduced): -5.00'], vat: ['INV-1001 (7.00% reduced): -0.35'] });
    // A tax that fits neither rate cannot be placed: stated against both, with the reason.
    const unknown = refundCorrection(refundData({ invoice_external_id: 'INV-1001', currency: 'EUR', amount: '5', tax_amount: '0.60' }), split, 'refund');
    expect(unknown.number).toBe('INV-1001 (19.00% standard) + INV-1001 (7.00% reduced)');
    expect(unknown.reason).toMatch(/work out its VAT per rate/);
  });

  it('submits a new rate as a new part and keeps the filed part as it is', () => {
    const result = plan({ target: mapped(line('100', '0.19'), line('50', '0.07')), filed: filed100 });
    expect(result.unchanged).toEqual(['INV-1001']);
    // The mapping numbers the parts of a split; the filed 19% part keeps its own number.
    expect(result.submit.map((s) => [s.body.invoice_number, s.body.net, s.body.vat])).toEqual([['INV-1001 (7.00% reduced)', '50.00', '3.50']]);
    expect(result.corrections).toEqual([]);
  });

  it('a rate change reverses the filed part and files the new one under its own number', () => {
    const result = plan({ target: mapped(line('100', '0.07')), filed: filed100 });
    expect(result.submit.map((s) => s.body.invoice_number)).toEqual(['INV-1001 (7.00% reduced)']);
    expect(result.corrections.map((c) => [c.number, ...Object.values(money(c.difference)), c.reason])).toEqual([
      ['INV-1001', '-100.00', '-19.00', '-119.00', 'the invoice no longer has a 19.00% standard part'],
    ]);
  });

  it('a voided, deleted or out-of-scope invoice reverses every filed part, with the reason', () => {
    const result = plan({ target: [], reason: 'the invoice was deleted after its VAT was filed', filed: filed100 });
    expect(result.corrections.map((c) => [money(c.difference), c.reason])).toEqual([
      [{ net: '-100.00', vat: '-19.00', gross: '-119.00' }, 'the invoice was deleted after its VAT was filed'],
    ]);
  });

  it('names a changed fact other than the amounts', () => {
    const [now] = mapped(line('100', '0.19'));
    const result = plan({ target: [{ ...now!, partner_name: 'Other GmbH' }], filed: filed100 });
    expect(result.corrections[0]!.changed).toEqual({ partner_name: ['INV-1001: filed Acme GmbH, now Other GmbH'] });
  });

  it('names a changed fact for each filed submission of the part, its supplements included', () => {
    const [now] = mapped(line('150', '0.19'));
    const supplement = { body: { ...filed100[0]!.body, invoice_number: 'INV-1001 (supplement 1)', net: '50.00', vat: '9.50', gross: '59.50' }, supplementOf: 'INV-1001' };
    const result = plan({ target: [{ ...now!, partner_name: 'Other GmbH' }], filed: [...filed100, supplement], increases: 'supplement' });
    expect(result.corrections[0]!.changed).toEqual({
      partner_name: ['INV-1001: filed Acme GmbH, now Other GmbH', 'INV-1001 (supplement 1): filed Acme GmbH, now Other GmbH'],
    });
  });

  it('withdraws a claim never sent that the invoice no longer needs, and keeps a rejected one', () => {
    const result = plan({
      target: mapped(line('100', '0.19')),
      claimed: [
        { entityJurisdiction: 'ej', invoiceNumber: 'INV-1001 (7.00% reduced)', state: 'pending' },
        { entityJurisdiction: 'ej', invoiceNumber: 'INV-OLD', state: 'rejected' },
      ],
    });
    expect(result.withdraw).toEqual([{ entityJurisdiction: 'ej', invoiceNumber: 'INV-1001 (7.00% reduced)' }]);
  });
});

describe('refundCorrection and describeCorrections', () => {
  const filed = bodies(mapVatSubmission(vatInvoice(), vatCtx())).map((body) => ({ body }));

  it('takes back the refund\'s own net and tax: 50.00 + 9.50 = 59.50', () => {
    const c = refundCorrection(refundData({ invoice_external_id: 'INV-1001', currency: 'EUR', amount: '50', tax_amount: '9.50' }), filed, 'refund of INV-1001');
    expect(money(c.difference)).toEqual({ net: '-50.00', vat: '-9.50', gross: '-59.50' });
    expect(money(c.now)).toEqual({ net: '50.00', vat: '9.50', gross: '59.50' });
  });

  it('without a stated tax uses the filed rate: 10.00 × 19% = 1.90', () => {
    const c = refundCorrection(refundData({ invoice_external_id: 'INV-1001', currency: 'EUR', amount: '10' }), filed, 'refund');
    expect(money(c.difference)).toEqual({ net: '-10.00', vat: '-1.90', gross: '-11.90' });
  });

  it('lists each difference under net, vat and gross, and what was filed under invoice_number', () => {
    const c = refundCorrection(refundData({ invoice_external_id: 'INV-1001', currency: 'EUR', amount: '50', tax_amount: '9.50' }), filed, 'refund of INV-1001');
    const { message, fields } = describeCorrections('VAT for refund R', [c]);
    expect(fields).toMatchObject({ net: ['INV-1001: -50.00'], vat: ['INV-1001: -9.50'], gross: ['INV-1001: -59.50'] });
    expect(fields.invoice_number![0]).toMatch(/^INV-1001 \(entity jurisdiction .*, reporting period 2025-01-01, EUR\): filed net 100\.00 vat 19\.00 gross 119\.00; now net 50\.00/);
    expect(message).toMatch(/correct by net -50\.00, vat -9\.50, gross -59\.50/);
  });
});
