import { describe, expect, it } from 'vitest';
import { createApiClients } from '../../../src/api/index.js';
import { Secret } from '../../../src/domain/secret.js';
import { hasCode } from '../../../src/domain/errors.js';
import { ENTITY, amount, keysOf, rejectionOf, useEmulatorClients, vatBody } from '../../helpers/emulator-clients.js';

// The client's reading against the emulator's, with the emulator's variety on: assertions are on
// meaning (values of amounts, what a status stands for), not on how a varied answer writes them.

// The real clients of src/api against the emulator, endpoint by endpoint of vat-compliance-api.md.

describe('VAT contract: transactions and types', () => {
  const ctx = useEmulatorClients();

  async function entityJurisdiction(): Promise<string> {
    const reg = await ctx.clients.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY, date_of_registration: '2024-01-01' });
    return reg.entity_jurisdiction!;
  }

  it('lists the transaction types with stable ids', async () => {
    const types = await ctx.clients.vat.transactionTypes();
    expect(types.map((t) => t.name)).toEqual(expect.arrayContaining(['B2B Sales', 'B2C Sales', 'Intra-EU Supplies', 'Import Services']));
    expect(types.find((t) => t.name === 'B2B Sales')?.id).toBe('b2b5a1e5-0000-4000-8000-000000000001');
  });

  it('answers 201 for a valid submission and 200 with warnings, then VAT_DUPLICATE for the same number', async () => {
    const ej = await entityJurisdiction();
    const created = await ctx.clients.vat.submitTransaction(vatBody(ej) as never);
    expect(created).toMatchObject({ status: 201, withWarnings: false });
    expect(created.transaction).toMatchObject({ invoice_number: 'INV-1001', validity_status: 'valid', compliance_status: expect.stringMatching(/^(valid|pending_review)$/), committed: true });

    const warned = await ctx.clients.vat.submitTransaction(vatBody(ej, { invoice_number: 'INV-1002', vat_number: undefined }) as never);
    expect(warned).toMatchObject({ status: 200, withWarnings: true });
    expect(warned.transaction.compliance_status).toBe('warning');

    const duplicate = await rejectionOf(ctx.clients.vat.submitTransaction(vatBody(ej) as never));
    expect(hasCode(duplicate, 'VAT_DUPLICATE')).toBe(true);
    expect(keysOf(duplicate.fields)).toEqual(['invoice_number']);
  });

  it('accepts the /create suffix form of the submission path', async () => {
    const ej = await entityJurisdiction();
    const res = await ctx.http('POST', '/api/vat/v1/transactions/create', { json: vatBody(ej) });
    expect(res.status).toBe(201);
    expect(ctx.emulator.requestLog.entries().at(-1)?.endpoint).toBe('vat.submit');
  });

  it('a different invoice_number space per entity jurisdiction', async () => {
    const de = await entityJurisdiction();
    const fr = (await ctx.clients.vat.registrations.create({ taxable_jurisdiction: 'FR', entity: ENTITY })).entity_jurisdiction!;
    expect(fr).not.toBe(de);
    await ctx.clients.vat.submitTransaction(vatBody(de) as never);
    expect((await ctx.clients.vat.submitTransaction(vatBody(fr) as never)).status).toBe(201);
  });
});

describe('VAT contract: registrations', () => {
  const ctx = useEmulatorClients({ registrationPageSize: 2 });

  it('creates, reads, updates, patches, lists (following next links) and deletes', async () => {
    const { registrations } = ctx.clients.vat;
    const created = await registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY, number: 'DE123456789' });
    expect(created).toMatchObject({
      registration_type: 'standard',
      status: 'pending',
      number_local: '',
      fiscal_code: '',
      taxable_jurisdiction_detail: { iso: 'DE', name: 'Germany' },
      entity_detail: { id: ENTITY },
    });
    expect((await registrations.get(created.id)).id).toBe(created.id);

    const updated = await registrations.update(created.id, { taxable_jurisdiction: 'DE', entity: ENTITY, number: 'DE999', date_of_registration: '2024-01-01' });
    expect(updated).toMatchObject({ number: 'DE999', status: 'active' });
    const patched = await registrations.patch(created.id, { date_registration_closed: '2024-06-30' });
    expect(patched).toMatchObject({ number: 'DE999', status: 'inactive', status_display: 'Inactive' });

    await registrations.create({ taxable_jurisdiction: 'FR', entity: ENTITY, registration_type: 'one_stop_shop' });
    await registrations.create({ taxable_jurisdiction: 'US-CA', entity: ENTITY, registration_type: 'sales_tax_registration' });
    const pages = [];
    for await (const page of registrations.pages()) pages.push(page);
    expect(pages.map((p) => p.results.length)).toEqual([2, 1]);
    expect(pages[0]!.count).toBe(3);
    expect(pages[0]!.next).toMatch(new RegExp(`^${ctx.emulator.url}/registrations/v1/registrations/\\?`));
    const all = [];
    for await (const r of registrations.iterate({ order_by: '-number' })) all.push(r.number);
    expect(all).toEqual(['DE999', '', '']);

    await registrations.delete(created.id);
    expect(hasCode(await rejectionOf(registrations.get(created.id)), 'API_NOT_FOUND')).toBe(true);
  });

  it('refuses a combination that is not configured with 400 {detail}', async () => {
    const error = await rejectionOf(ctx.clients.vat.registrations.create({ taxable_jurisdiction: 'US-CA', entity: ENTITY, registration_type: 'one_stop_shop' }));
    expect(hasCode(error, 'API_INVALID')).toBe(true);
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/not a configured combination/);
  });

  it('answers 403 to a client without the permission', async () => {
    ctx.emulator.authority.addClient({ clientId: 'viewer', clientSecret: 'viewer-secret', permissions: ['REGISTRATION_VIEW'] });
    const viewer = createApiClients({ taxUrl: ctx.emulator.url, clientId: 'viewer', clientSecret: new Secret('viewer-secret') });
    try {
      expect((await viewer.vat.registrations.list()).count).toBe(0);
      const error = await rejectionOf(viewer.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY }));
      expect(hasCode(error, 'API_FORBIDDEN')).toBe(true);
      expect(error.message).toMatch(/REGISTRATION_CREATE/);
    } finally {
      await viewer.close();
    }
  });
});

describe('VAT contract: filings', () => {
  const ctx = useEmulatorClients();

  it('creates a filing whose draft boxes come from the submitted transactions, lists its files and approves it', async () => {
    const { vat } = ctx.clients;
    const reg = await vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY, date_of_registration: '2024-01-01' });
    const ej = reg.entity_jurisdiction!;
    await vat.submitTransaction(vatBody(ej) as never);
    await vat.submitTransaction(vatBody(ej, { invoice_number: 'INV-1002', net: '50.00', vat: '9.50', gross: '59.50' }) as never);
    await vat.submitTransaction(vatBody(ej, { invoice_number: 'INV-APRIL', reporting_period: '2025-04-01' }) as never);

    const filing = await vat.filings.create({ registration_filing_type: reg.id, reporting_period_start: '2025-03-01', reporting_period_end: '2025-03-31' });
    expect(filing).toMatchObject({ status: expect.stringMatching(/^(draft|in_preparation)$/), currency: 'EUR', due_date: '2025-05-07' });
    expect([amount(filing.total_vat_due), amount(filing.total_net)]).toEqual(['28.5', '150']);
    expect((await vat.filings.get(filing.id)).id).toBe(filing.id);

    const draft = await vat.filings.draftReturnBoxes(filing.id);
    expect(amount(draft.total_vat_due)).toBe('28.5');
    expect(draft.boxes.find((b) => b.box_number === '1')).toMatchObject({ currency: 'EUR' });
    expect(amount(draft.boxes.find((b) => b.box_number === '1')?.value)).toBe('28.5');
    expect(amount(draft.boxes.find((b) => b.box_number === '9')?.value)).toBe('2');

    // A varied answer may list a file of a type added later (audit_trail) beside the return.
    const files = (await vat.filings.files(filing.id)).filter((f) => f.file_type === 'vat_return');
    expect(files).toHaveLength(1);
    const download = await ctx.http('GET', new URL(files[0]!.download_url!).pathname);
    expect(download.status).toBe(200);

    const approved = await vat.filings.approve(filing.id, { approved_by: 'ops@example.com' });
    expect(approved.status).toBe('approved');
    const again = await rejectionOf(vat.filings.approve(filing.id));
    expect(hasCode(again, 'API_INVALID')).toBe(true);
    expect(again.status).toBe(409);

    // Approved boxes are frozen: a late submission no longer changes them.
    await vat.submitTransaction(vatBody(ej, { invoice_number: 'INV-LATE' }) as never);
    expect(amount((await vat.filings.draftReturnBoxes(filing.id)).total_vat_due)).toBe('28.5');
  });

  it('answers 404 {detail} for an unknown filing', async () => {
    const error = await rejectionOf(ctx.clients.vat.filings.get('00000000-0000-4000-8000-000000000000'));
    expect(hasCode(error, 'API_NOT_FOUND')).toBe(true);
  });
});
