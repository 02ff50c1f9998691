import { expect } from 'vitest';
import type { z } from 'zod';
import { CustomerRequest, ExemptionRequest, TransactionRequest } from '../../../src/api/schemas/tax-engine.js';
import { CustomerData, ExemptionData, InvoiceData, RefundData } from '../../../src/domain/events.js';
import type { RecordKey, RecordKind } from '../../../src/domain/record-key.js';
import { MappingSettings, type MappingSettingsInput } from '../../../src/mapping/settings.js';
import type { MapResult, MappingContext, RefundMapResult } from '../../../src/mapping/result.js';

/** Canonical data as a connector emits it on the wire (decimal strings), parsed like the processor does. */
export const invoiceData = (wire: Partial<z.input<typeof InvoiceData>> = {}): InvoiceData =>
  InvoiceData.parse({
    issued_at: '2026-11-20T09:00:00Z',
    status: 'active',
    currency: 'USD',
    tax_inclusive: false,
    lines: [{ unit_price: '10', quantity: '1' }],
    ...wire,
  });

/** The invoice of the worked examples in docs/mapping.md. */
export const DOC_INVOICE = {
  number: 'INV-2026-0815',
  issued_at: '2026-11-20T09:00:00+01:00',
  status: 'active',
  currency: 'EUR',
  tax_inclusive: false,
  customer: { external_id: 'C-2001', name: 'Contoso GmbH', email: 'ap@contoso.example', created_at: '2026-01-05T08:00:00Z' },
  addresses: { billing: { city: 'Berlin', zip: '10115', country: 'DE' }, shipping: { street: 'Unter den Linden 1', city: 'Berlin', country: 'DE' } },
  lines: [
    { sku: 'WID-1', name: 'Widget', unit_price: '10.50', quantity: '3', discount: '1.50' },
    { sku: 'SVC-9', unit_price: '120', quantity: '1' },
  ],
  discount: '5.00',
  shipping: { amount: '4.90' },
  created_at: '2026-11-20T08:00:00Z',
  updated_at: '2026-11-20T08:30:00Z',
} as const satisfies z.input<typeof InvoiceData>;

/** The settings of the worked examples in docs/mapping.md. */
export const DOC_SETTINGS = { tax_codes: { by_sku: { 'SVC-9': 'S-CONSULT' }, shipping: 'FR020100' } } satisfies MappingSettingsInput;

export const refundData = (wire: Partial<z.input<typeof RefundData>> = {}): RefundData =>
  RefundData.parse({ issued_at: '2026-11-21T09:00:00Z', currency: 'USD', amount: '10', ...wire });

export const customerData = (wire: z.input<typeof CustomerData> = {}): CustomerData => CustomerData.parse(wire);

export const exemptionData = (wire: Partial<z.input<typeof ExemptionData>> = {}): ExemptionData =>
  ExemptionData.parse({ customer_external_id: 'C-1', country: 'US', start_date: '2026-01-01', exemption_type: 'full', ...wire });

export const key = (kind: RecordKind, externalId: string, source = 'api'): RecordKey => ({ kind, source, external_id: externalId });

export const ctx = (kind: RecordKind, externalId: string, settings: MappingSettingsInput = {}, source = 'api'): MappingContext => ({
  key: key(kind, externalId, source),
  settings: MappingSettings.parse(settings),
});

const SCHEMAS = { transaction: TransactionRequest, customer: CustomerRequest, exemption: ExemptionRequest } as const;

/**
 * Asserts a `send` result and returns its body, after checking it again with the API's request
 * schema, through a JSON round trip (what goes on the wire), and that no lineAmount appears.
 */
export function sent<B>(result: MapResult<B> | RefundMapResult, schema: keyof typeof SCHEMAS = 'transaction'): B {
  if (result.kind !== 'send') throw new Error(`expected send, got ${JSON.stringify(result)}`);
  const wire = JSON.parse(JSON.stringify(result.body)) as unknown;
  const parsed = SCHEMAS[schema].safeParse(wire);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(JSON.stringify(wire)).not.toMatch(/lineAmount/i);
  return result.body as B;
}

export function invalidFields(result: MapResult<unknown> | RefundMapResult): Record<string, string[]> {
  if (result.kind !== 'invalid') throw new Error(`expected invalid, got ${JSON.stringify(result)}`);
  return result.fields;
}
