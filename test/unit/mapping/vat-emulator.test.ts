import { describe, expect, it } from 'vitest';
import type { VatTransactionRequest } from '../../../src/api/schemas/vat.js';
import type { Registration } from '../../../src/api/schemas/vat-answers.js';
import { validateVatTransaction } from '../../../src/mapping/vat-validation.js';
import { VatSettings, matchRegistration, registrationRef } from '../../../src/mapping/vat-settings.js';
import { mapVatSubmission } from '../../../src/mapping/vat/index.js';
import { ENTITY, keysOf, useEmulatorClients as useEmulator } from '../../helpers/emulator-clients.js';
import { bodies, businessIn, consumerIn, vatInvoice } from './vat-fixtures.js';

// The emulator runs the same rules as the local validator (one function), plus rule 7 and its
// warnings: what the mapper sends must be accepted as is, without warnings.
describe('mapped VAT bodies against the emulator', () => {
  const api = useEmulator({ clock: () => Date.parse('2025-03-15T12:00:00Z'), entities: [{ id: ENTITY, name: 'Beta GmbH' }] });

  async function setup() {
    for (const registration_type of ['standard', 'one_stop_shop'] as const) {
      await api.clients.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY, registration_type, date_of_registration: '2024-01-01' });
    }
    const list: Registration[] = [];
    for await (const r of api.clients.vat.registrations.iterate()) list.push(r);
    const settings = VatSettings.parse({
      seller_country: 'DE',
      registrations: [{ taxable_jurisdiction: 'DE' }, { taxable_jurisdiction: 'DE', registration_type: 'one_stop_shop' }],
      rates: { DE: { standard: '19', reduced: ['7'] } },
    });
    const resolved = new Map<string, string>();
    for (const r of settings.registrations) {
      const match = matchRegistration(r, list);
      if (!match.ok) throw new Error(match.reason);
      resolved.set(registrationRef(r), match.entity_jurisdiction);
    }
    const types = await api.clients.vat.transactionTypes();
    return { key: { kind: 'transaction' as const, source: 'api', external_id: 'X' }, settings, resolved, transactionTypes: types, today: '2025-03-15' };
  }

  it('accepts every mapped body with 201 (no warnings): domestic, OSS, intra-EU, export, split, JPY, KWD, tax-inclusive', async () => {
    const ctx = await setup();
    const invoices = [
      vatInvoice({ number: 'RT-1' }),
      vatInvoice({ number: 'RT-2', ...consumerIn('FR'), lines: [{ unit_price: '10', quantity: '1', tax_rate: '0.20' }] }),
      vatInvoice({ number: 'RT-3', ...businessIn('FR', 'FR12345678901'), lines: [{ unit_price: '500', quantity: '1', tax_rate: '0' }] }),
      vatInvoice({ number: 'RT-4', ...consumerIn('US'), lines: [{ unit_price: '80', quantity: '1' }] }),
      vatInvoice({ number: 'RT-5', lines: [{ unit_price: '100', quantity: '1', tax_rate: '0.19' }, { unit_price: '33.33', quantity: '1', tax_rate: '0.07' }], discount: '10' }),
      vatInvoice({ number: 'RT-6', currency: 'JPY', tax_inclusive: true, lines: [{ unit_price: '1099', quantity: '1', tax_rate: '0.10' }] }),
      vatInvoice({ number: 'RT-7', currency: 'KWD', lines: [{ unit_price: '10.125', quantity: '1', tax_rate: '0.05' }] }),
      vatInvoice({ number: 'RT-8', tax_inclusive: true, lines: [{ unit_price: '3.335', quantity: '3', tax_amount: '1.60' }] }),
    ];
    const sent: VatTransactionRequest[] = [];
    for (const invoice of invoices) {
      for (const body of bodies(mapVatSubmission(invoice, { ...ctx, key: { ...ctx.key, external_id: invoice.number! } }))) {
        const result = await api.clients.vat.submitTransaction(body);
        expect({ number: body.invoice_number, status: result.status }).toEqual({ number: body.invoice_number, status: 201 });
        sent.push(body);
      }
    }
    expect(sent.map((b) => b.invoice_number)).toEqual(['RT-1', 'RT-2', 'RT-3', 'RT-4', 'RT-5 (19.00% standard)', 'RT-5 (7.00% reduced)', 'RT-6', 'RT-7', 'RT-8']);
  });

  it('the local validator and the emulator name the same fields for the same broken body', async () => {
    const ctx = await setup();
    const good = bodies(mapVatSubmission(vatInvoice({ number: 'RT-V' }), { ...ctx, key: { ...ctx.key, external_id: 'RT-V' } }))[0]!;
    const broken: Record<string, unknown>[] = [
      { gross: '118.00' },
      { vat: '10.00', gross: '110.00' },
      { invoice_date: '2025-03-16' },
      { vat_number: 'DE1' },
      { currency: 'EUX' },
      { partner_country: 'XX' },
      { net: '100.001' },
      { net: '-1.00', vat: '-0.19', gross: '-1.19' },
      { transaction_type_id: '00000000-0000-4000-8000-000000000000' },
      { partner_name: 'x'.repeat(256) },
    ];
    const knownTypeIds = new Set(ctx.transactionTypes.map((t) => t.id));
    for (const override of broken) {
      const body = { ...good, ...override };
      const local = validateVatTransaction(body, { today: ctx.today, knownTypeIds, tolerance: '0.05' });
      const res = await api.http('POST', '/api/vat/v1/transactions/', { json: body });
      expect(res.status, JSON.stringify(override)).toBe(422);
      expect(keysOf(res.body.details).sort(), JSON.stringify(override)).toEqual(Object.keys(local).sort());
    }
  });
});
