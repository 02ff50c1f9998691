import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients, type Registration, type VatTransactionRequest } from '../../src/api/index.js';
import { Secret } from '../../src/domain/secret.js';
import { hasCode } from '../../src/domain/errors.js';
import { DEFAULT_CLIENT, VAT_TRANSACTION_TYPES, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { amount } from '../helpers/emulator-clients.js';
import { testVariety } from '../helpers/emulator-variety.js';
import { createKeys } from '../../src/queue/keys.js';
import { createVatLedger, type Outcome, type VatLedger } from '../../src/queue/vat-ledger.js';
import {
  approveFiling,
  closeRegistration,
  createFiling,
  createRegistration,
  filingBoxes,
  filingFiles,
  listRegistrations,
  reconcileVat,
  showFiling,
  showRegistration,
  transactionTypes,
  updateRegistration,
} from '../../src/vat-ops/commands.js';
import { useRedis } from '../helpers/redis.js';

const ENTITY = '11111111-2222-4333-8444-555555555555';
const B2C = VAT_TRANSACTION_TYPES.find((t) => t.name === 'B2C Sales')!.id;

describe('taxsync vat commands (emulator + real Redis)', () => {
  const ctx = useRedis();
  let emulator: Emulator & { url: string };
  let api: ApiClients;
  let ledger: VatLedger;
  let registration: Registration;

  beforeEach(async () => {
    emulator = await startEmulator({ port: 0, host: '127.0.0.1', entities: [{ id: ENTITY, name: 'Beta GmbH' }], registrationPageSize: 2, variety: testVariety() });
    api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
    ledger = createVatLedger(ctx.redis, createKeys(ctx.prefix), { leaseMs: 60_000 });
    registration = await createRegistration(api.vat, {
      taxable_jurisdiction: 'DE',
      entity: ENTITY,
      registration_type: 'standard',
      number: 'DE123',
      date_of_registration: '2024-01-01',
    });
  });

  afterEach(async () => {
    await api.close();
    await emulator.close();
  });

  const body = (invoice: string, net: string, vat: string, gross: string, period = '2025-01-01'): VatTransactionRequest => ({
    entity_jurisdiction: registration.entity_jurisdiction!,
    invoice_number: invoice,
    invoice_date: period.replace(/01$/, '15'),
    partner_name: 'Erika Mustermann',
    partner_country: 'DE',
    net,
    vat,
    gross,
    vat_rate: '19.00',
    vat_rate_type: 'standard',
    currency: 'EUR',
    reporting_period: period,
    transaction_type_id: B2C,
    source: 'api',
  });

  /** What the processor does for one body: ledger begin, the POST (when `send`), confirm. */
  async function submitted(b: VatTransactionRequest, options: { send?: boolean; state?: 'confirmed' | 'unknown' | 'rejected' } = {}): Promise<void> {
    const json = JSON.stringify(b);
    const facts = {
      record: `vat:api:${b.invoice_number}`,
      body: json,
      bodyHash: createHash('sha256').update(json).digest('hex'),
      reportingPeriod: b.reporting_period,
      net: b.net,
      vat: b.vat,
      currency: b.currency,
    };
    const claim = await ledger.begin(b.entity_jurisdiction, b.invoice_number, facts);
    if (!claim.go) throw new Error(`not claimed: ${claim.state}`);
    const settle = async (outcome: Outcome) => {
      await ledger.settle(b.entity_jurisdiction, b.invoice_number, claim.token, outcome);
    };
    const state = options.state ?? 'confirmed';
    if (state === 'unknown') return settle({ kind: 'unknown', note: 'timeout' });
    if (state === 'rejected') return settle({ kind: 'rejected', note: 'vat_number', code: 'API_INVALID' });
    let transactionId: string | undefined;
    if (options.send !== false) transactionId = (await api.vat.submitTransaction(b)).transaction.id;
    await settle({ kind: 'confirmed', warnings: false, ...(transactionId ? { transactionId } : {}) });
  }

  it('types: the transaction types list', async () => {
    const types = await transactionTypes(api.vat);
    expect(types.map((t) => t.name)).toEqual(expect.arrayContaining(['B2B Sales', 'B2C Sales', 'Intra-EU Supplies', 'Import Services']));
  });

  it('registrations: create, list through all pages with filters, show, update', async () => {
    const at = await createRegistration(api.vat, { taxable_jurisdiction: 'AT', entity: ENTITY, number: 'ATU1' });
    const oss = await createRegistration(api.vat, { taxable_jurisdiction: 'DE', entity: ENTITY, registration_type: 'one_stop_shop', number: 'OSS1' });
    // page size 2: three registrations need two pages
    const all = await listRegistrations(api.vat, { order_by: 'number' });
    expect(all.map((r) => r.id).sort()).toEqual([registration.id, at.id, oss.id].sort());
    expect(await listRegistrations(api.vat, { number: 'OSS1' })).toEqual([expect.objectContaining({ id: oss.id })]);
    // one entity jurisdiction per (entity, country): the DE standard and OSS registrations share it
    expect((await listRegistrations(api.vat, { entity_jurisdiction: registration.entity_jurisdiction! })).map((r) => r.id).sort()).toEqual(
      [registration.id, oss.id].sort(),
    );
    expect(await listRegistrations(api.vat, { entity_jurisdiction: at.entity_jurisdiction! })).toEqual([expect.objectContaining({ id: at.id })]);
    expect(await listRegistrations(api.vat, { entity: '99999999-2222-4333-8444-555555555555' })).toEqual([]);

    const shown = await showRegistration(api.vat, at.id);
    expect(shown).toMatchObject({ id: at.id, number: 'ATU1', taxable_jurisdiction_detail: expect.objectContaining({ iso: 'AT' }) });

    const updated = await updateRegistration(api.vat, at.id, { fiscal_code: 'FC-1', iban: 'AT611904300234573201' });
    expect(updated).toMatchObject({ id: at.id, number: 'ATU1', fiscal_code: 'FC-1', iban: 'AT611904300234573201' });
    await expect(updateRegistration(api.vat, at.id, {})).rejects.toThrow(/nothing to update/);
    await expect(showRegistration(api.vat, '99999999-2222-4333-8444-555555555555')).rejects.toSatisfy((e) => hasCode(e, 'API_NOT_FOUND'));
  });

  it('registrations close: refused without --yes when nobody can answer; asks on a terminal; --yes closes', async () => {
    const never = async () => {
      throw new Error('must not ask');
    };
    await expect(closeRegistration(api.vat, registration.id, { yes: false, interactive: false, confirm: never })).rejects.toThrow(
      /pass --yes to confirm \(stdin is not a terminal\)/,
    );
    expect((await showRegistration(api.vat, registration.id)).date_registration_closed ?? null).toBeNull();

    const questions: string[] = [];
    const declined = await closeRegistration(api.vat, registration.id, {
      yes: false,
      interactive: true,
      date: '2025-06-30',
      confirm: async (q) => {
        questions.push(q);
        return false;
      },
    });
    expect(declined).toEqual({ closed: false, reason: 'not confirmed' });
    expect(questions[0]).toMatch(/Close registration .* \(DE standard number DE123\) as of 2025-06-30\? This triggers deregistration/);
    expect((await showRegistration(api.vat, registration.id)).date_registration_closed ?? null).toBeNull();

    const accepted = await closeRegistration(api.vat, registration.id, { yes: false, interactive: true, date: '2025-06-30', confirm: async () => true });
    expect(accepted).toMatchObject({ closed: true, registration: { date_registration_closed: '2025-06-30' } });

    const today = await closeRegistration(api.vat, registration.id, { yes: true, interactive: false, confirm: never, now: () => new Date('2025-07-01T12:00:00Z') });
    expect(today).toMatchObject({ closed: true, registration: { date_registration_closed: '2025-07-01' } });
    await expect(closeRegistration(api.vat, registration.id, { yes: true, interactive: false, confirm: never, date: '1.7.2025' })).rejects.toThrow(/YYYY-MM-DD/);
  });

  it('filings: create, show, files, boxes, approve', async () => {
    await submitted(body('INV-1', '100.00', '19.00', '119.00'));
    const filing = await createFiling(api.vat, { registration_filing_type: registration.id, reporting_period_start: '2025-01-01', reporting_period_end: '2025-03-31' });
    expect(filing).toMatchObject({ status: 'draft', currency: 'EUR', entity_jurisdiction: registration.entity_jurisdiction });
    const shown = await showFiling(api.vat, filing.id);
    expect(shown.id).toBe(filing.id);
    expect(amount(shown.total_net)).toBe('100');
    expect((await filingFiles(api.vat, filing.id)).map((f) => f.file_type)).toEqual(['vat_return']);
    const boxes = await filingBoxes(api.vat, filing.id);
    expect(amount(boxes.boxes.find((b) => b.box_number === '1')?.value)).toBe('19');
    expect(boxes.reporting_period).toBe('2025-01-01/2025-03-31');
    const approved = await approveFiling(api.vat, filing.id, { approvedBy: 'Ada', notes: 'reconciled' });
    expect(approved).toMatchObject({ id: filing.id, status: 'approved' });
    await expect(approveFiling(api.vat, filing.id)).rejects.toThrow();
  });

  describe('reconcile', () => {
    async function filingForQ1(): Promise<string> {
      return (await createFiling(api.vat, { registration_filing_type: registration.id, reporting_period_start: '2025-01-01', reporting_period_end: '2025-03-31' })).id;
    }

    it('matches when the draft return counts exactly the confirmed submissions', async () => {
      await submitted(body('INV-1', '100.00', '19.00', '119.00'));
      await submitted(body('INV-2', '0.10', '0.02', '0.12', '2025-03-01'));
      await submitted(body('INV-APRIL', '50.00', '9.50', '59.50', '2025-04-01'));
      const report = await reconcileVat({ ledger, vat: api.vat }, { period: '2025-Q1', filingId: await filingForQ1() });
      expect(report.compared).toMatchObject({ count: 2, net: '100.10', vat: '19.02', entity_jurisdiction: registration.entity_jurisdiction, currency: 'EUR' });
      expect(report.filing?.totals).toEqual({ count: 2, net: '100.10', vat: '19.02' });
      expect(report.differences).toEqual([]);
      expect(report.matches).toBe(true);
    });

    it('names a confirmed ledger entry the filing does not have', async () => {
      await submitted(body('INV-1', '100.00', '19.00', '119.00'));
      await submitted(body('INV-LOST', '20.00', '3.80', '23.80'), { send: false });
      const report = await reconcileVat({ ledger, vat: api.vat }, { period: '2025-Q1', filingId: await filingForQ1() });
      expect(report.matches).toBe(false);
      expect(report.differences.map((d) => [d.field, d.ledger, d.filing])).toEqual([
        ['count', '2', '1'],
        ['net', '120.00', '100.00'],
        ['vat', '22.80', '19.00'],
      ]);
    });

    it('names a box total that differs (a submission taxsync never recorded)', async () => {
      await submitted(body('INV-1', '100.00', '19.00', '119.00'));
      await api.vat.submitTransaction(body('MANUAL-1', '10.00', '1.90', '11.90'));
      const january = await createFiling(api.vat, { registration_filing_type: registration.id, reporting_period_start: '2025-01-01', reporting_period_end: '2025-01-31' });
      const report = await reconcileVat({ ledger, vat: api.vat }, { period: '2025-01', filingId: january.id });
      expect(report.matches).toBe(false);
      expect(report.differences.find((d) => d.field === 'vat')).toMatchObject({ ledger: '19.00', filing: '20.90', difference: '1.90' });
    });

    it('lists open and rejected entries of the period; open ones make the comparison uncertain', async () => {
      await submitted(body('INV-1', '100.00', '19.00', '119.00'));
      await submitted(body('INV-U', '5.00', '0.95', '5.95'), { state: 'unknown' });
      await submitted(body('INV-R', '7.00', '1.33', '8.33'), { state: 'rejected' });
      const ledgerOnly = await reconcileVat({ ledger }, { period: '2025-Q1' });
      expect(ledgerOnly.matches).toBeUndefined();
      expect(ledgerOnly.ledger.confirmed).toMatchObject({ count: 1, net: '100.00', vat: '19.00' });
      expect(ledgerOnly.ledger.uncertain).toEqual([
        expect.objectContaining({ invoice_number: 'INV-U', state: 'unknown', entity_jurisdiction: registration.entity_jurisdiction, note: 'timeout' }),
      ]);
      expect(ledgerOnly.ledger.rejected).toEqual([expect.objectContaining({ invoice_number: 'INV-R', state: 'rejected' })]);

      const withFiling = await reconcileVat({ ledger, vat: api.vat }, { period: '2025-Q1', filingId: await filingForQ1() });
      expect(withFiling.differences).toEqual([]);
      expect(withFiling.matches).toBe(false);
    });

    it("refuses a filing of another period, and a period it cannot read", async () => {
      const id = await filingForQ1();
      await expect(reconcileVat({ ledger, vat: api.vat }, { period: '2025-02', filingId: id })).rejects.toThrow(/covers 2025-01-01 … 2025-03-31, not 2025-02/);
      await expect(reconcileVat({ ledger }, { period: 'Q1' })).rejects.toThrow(/neither YYYY-MM nor YYYY-Qn/);
    });
  });
});
