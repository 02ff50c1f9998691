import type { z } from 'zod';
import { VatTransactionRequest } from '../../../src/api/schemas/vat.js';
import { InvoiceData } from '../../../src/domain/events.js';
import type { MapResult } from '../../../src/mapping/result.js';
import { VatSettings, type VatSettingsInput } from '../../../src/mapping/vat-settings.js';
import type { VatMappingContext } from '../../../src/mapping/vat/index.js';
import { VAT_TRANSACTION_TYPES } from '../../../src/emulator/vat/reference-data.js';

/** Entity jurisdictions of the fixture seller (established in Germany). */
export const EJ_DE = '0d000000-0000-4000-8000-0000000000de';
export const EJ_OSS = '0d000000-0000-4000-8000-00000000055a';
export const EJ_AT = '0d000000-0000-4000-8000-0000000000a7';

export const TYPES = VAT_TRANSACTION_TYPES.map(({ id, name }) => ({ id, name }));
export const typeId = (name: string): string => TYPES.find((t) => t.name === name)!.id;

/** A German seller with a domestic and an OSS registration, and the German rates. */
export const SETTINGS_INPUT = {
  seller_country: 'DE',
  registrations: [
    { entity_jurisdiction: EJ_DE, country: 'DE' },
    { entity_jurisdiction: EJ_OSS, country: 'DE', scheme: 'oss' },
  ],
  rates: { DE: { standard: '19.00', reduced: ['7.00'] }, FR: { standard: '20.00', reduced: ['5.50', '10.00'] } },
} satisfies VatSettingsInput;

export const vatSettings = (overrides: Partial<VatSettingsInput> = {}): VatSettings => VatSettings.parse({ ...SETTINGS_INPUT, ...overrides });

export const TODAY = '2025-03-15';

export const vatCtx = (overrides: Partial<VatMappingContext> = {}, settings: Partial<VatSettingsInput> = {}): VatMappingContext => ({
  key: { kind: 'transaction', source: 'api', external_id: 'INV-1001' },
  settings: vatSettings(settings),
  transactionTypes: TYPES,
  today: TODAY,
  ...overrides,
});

const DE = { street: 'Unter den Linden 1', city: 'Berlin', zip: '10115', country: 'DE' };

/** A domestic German B2B invoice: one line of 100.00 at 19%. */
export const vatInvoice = (wire: Partial<z.input<typeof InvoiceData>> = {}): InvoiceData =>
  InvoiceData.parse({
    number: 'INV-1001',
    issued_at: '2025-03-02T10:00:00+01:00',
    status: 'active',
    currency: 'EUR',
    tax_inclusive: false,
    customer: { external_id: 'C-1', name: 'Acme GmbH', tax_number: 'DE123456789' },
    addresses: { billing: DE, shipping: DE },
    lines: [{ sku: 'WID-1', unit_price: '100', quantity: '1', tax_rate: '0.19' }],
    ...wire,
  });

/** A consumer in `country` (no VAT number). */
export const consumerIn = (country: string): Partial<z.input<typeof InvoiceData>> => ({
  customer: { external_id: 'C-2', name: 'Erika Mustermann' },
  addresses: { billing: { country }, shipping: { country } },
});

/** A business in `country` with `vatNumber`. */
export const businessIn = (country: string, vatNumber: string): Partial<z.input<typeof InvoiceData>> => ({
  customer: { external_id: 'C-3', name: 'Partner SA', tax_number: vatNumber },
  addresses: { billing: { country }, shipping: { country } },
});

/** The bodies of a `send`, each checked again with the request schema after a JSON round trip. */
export function bodies(result: MapResult<VatTransactionRequest[]>): VatTransactionRequest[] {
  if (result.kind !== 'send') throw new Error(`expected send, got ${JSON.stringify(result)}`);
  for (const body of result.body) VatTransactionRequest.parse(JSON.parse(JSON.stringify(body)));
  return result.body;
}

export function one(result: MapResult<VatTransactionRequest[]>): VatTransactionRequest {
  const all = bodies(result);
  if (all.length !== 1) throw new Error(`expected one body, got ${all.length}`);
  return all[0]!;
}

export function fieldsOf(result: MapResult<unknown>): Record<string, string[]> {
  if (result.kind !== 'invalid') throw new Error(`expected invalid, got ${JSON.stringify(result)}`);
  return result.fields;
}
