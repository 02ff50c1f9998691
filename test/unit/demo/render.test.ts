import { describe, expect, it } from 'vitest';
import { renderDemo } from '../../../src/demo/render.js';
import type { DemoResult } from '../../../src/demo/run.js';
import type { DemoVatRow, DemoVatSubmission } from '../../../src/demo/vat.js';

const submission = (invoice_number: string): DemoVatSubmission => ({
  invoice_number,
  entity_jurisdiction: 'c024208a-0000-4000-8000-000000000001',
  reporting_period: '2026-10-01',
  net: '74.20',
  vat: '14.10',
  currency: 'EUR',
  state: 'confirmed',
  transaction_id: 't',
  received: { count: 1, statuses: [201] },
});

const row = (connection: string, external_id: string, platform_id: string, submissions: DemoVatSubmission[], extra: Partial<DemoVatRow> = {}): DemoVatRow => ({
  connection,
  record: 'invoice',
  source: connection.startsWith('woocommerce') ? 'woocommerce' : 'api',
  external_id,
  platform_id,
  settled: true,
  outcome: submissions.length > 0 ? 'submitted' : 'not sent',
  detail: submissions.length > 0 ? `VAT ${submissions[0]!.invoice_number} accepted (201)` : 'outside the scope',
  submissions,
  ...extra,
});

const record = (connection: string, source: string, external_id: string, platform_id: string) => ({
  connection,
  record: 'invoice' as const,
  source,
  external_id,
  platform_id,
  arrived: true,
  tax_id: `tx-${external_id}`,
  currency: 'EUR',
  amount: '88.30',
  total_tax: '0.00',
});

const result = (rows: DemoVatRow[]): DemoResult => ({
  ok: true,
  run: '1',
  daemon: 'http://127.0.0.1:8080',
  emulator: 'http://127.0.0.1:41735',
  deliveries: [],
  records: [record('woocommerce', 'woocommerce', '441', '441'), record('woocommerce-fr', 'woocommerce', 'fr-441', '441'), record('erp', 'api', 'INV-1', 'INV-1')],
  vat: { enabled: true, rows },
});

describe('what taxsync demo prints', () => {
  it('labels each record and VAT row by its connection, its external id as written, and its VAT number', () => {
    const printed = renderDemo(result([row('woocommerce', '441', '441', [submission('441')]), row('woocommerce-fr', 'fr-441', '441', [submission('FR-441')])]));
    expect(printed).toMatch(/^connection +record +external id +tax engine id/m);
    expect(printed).toMatch(/^woocommerce-fr +invoice +fr-441 +tx-fr-441 +EUR 88\.30/m);
    expect(printed).toMatch(/^woocommerce-fr +invoice +fr-441 +FR-441 +EUR 74\.20 +14\.10 +1 \(201\) +submitted: VAT FR-441 accepted/m);
    expect(printed).toContain('2 VAT invoice(s) accepted by the VAT service');
  });

  it("traces each shop's submitted record by its connection and the platform's id; a record without a prefix by its source", () => {
    const printed = renderDemo(result([row('woocommerce', '441', '441', [submission('441')]), row('woocommerce-fr', 'fr-441', '441', [submission('FR-441')])]));
    expect(printed).toContain('Trace a record (every step it took, and its VAT ledger):\n  npx taxsync trace woocommerce 441\n  npx taxsync trace woocommerce-fr 441\n');
    // An ERP record is the source's (api), whichever connection id the default has.
    const unsettled = renderDemo(result([row('erp', 'INV-1', 'INV-1', [], { settled: false, outcome: 'not settled', detail: 'not processed yet' })]));
    expect(unsettled).toContain('NO OUTCOME YET (taxsync trace api INV-1)');
    expect(unsettled).toContain('  npx taxsync trace woocommerce 441');
  });
});
