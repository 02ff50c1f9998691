/**
 * Canonical events as an ERP sends them to `/webhooks/erp` (wire form: decimals as strings),
 * for e2e tests. `version` orders the events of one record: occurred_at is a fixed base time plus
 * `version` seconds, and the event id names record and version.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const at = (version: number) => new Date(BASE + version * 1000).toISOString();

export interface ErpEvent {
  id: string;
  type: string;
  occurred_at: string;
  record: { kind: 'customer' | 'transaction' | 'exemption'; source: 'api'; external_id: string };
  data: Record<string, unknown>;
}

export function erpCustomer(externalId: string, version: number, data: Record<string, unknown> = {}): ErpEvent {
  return {
    id: `erp-${externalId}-v${version}`,
    type: 'customer.upserted',
    occurred_at: at(version),
    record: { kind: 'customer', source: 'api', external_id: externalId },
    data: {
      name: `${externalId} version ${version}`,
      addresses: { billing: { street: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001', country: 'US' } },
      ...data,
    },
  };
}

export interface InvoiceLine {
  unit_price: string;
  quantity: string;
  /** A fraction (0.19), as VAT needs it. */
  tax_rate?: string;
}

export function erpInvoice(externalId: string, version: number, lines: readonly InvoiceLine[], data: Record<string, unknown> = {}): ErpEvent {
  return {
    id: `erp-${externalId}-v${version}`,
    type: 'invoice.upserted',
    occurred_at: at(version),
    record: { kind: 'transaction', source: 'api', external_id: externalId },
    data: {
      number: externalId,
      issued_at: at(0),
      status: 'active',
      currency: 'USD',
      tax_inclusive: false,
      addresses: { shipping: { street: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001', country: 'US' } },
      lines: lines.map((line, i) => ({ id: String(i + 1), name: `item ${i + 1}`, ...line })),
      ...data,
    },
  };
}

export function erpRefund(externalId: string, version: number, invoiceExternalId: string, amount: string): ErpEvent {
  return {
    id: `erp-${externalId}-v${version}`,
    type: 'refund.created',
    occurred_at: at(version),
    record: { kind: 'transaction', source: 'api', external_id: externalId },
    data: { invoice_external_id: invoiceExternalId, issued_at: at(version), currency: 'USD', amount },
  };
}

export function erpExemption(externalId: string, version: number, customerExternalId: string, data: Record<string, unknown> = {}): ErpEvent {
  return {
    id: `erp-${externalId}-v${version}`,
    type: 'exemption.upserted',
    occurred_at: at(version),
    record: { kind: 'exemption', source: 'api', external_id: externalId },
    data: { customer_external_id: customerExternalId, country: 'US', start_date: '2026-01-01', exemption_type: 'full', ...data },
  };
}
