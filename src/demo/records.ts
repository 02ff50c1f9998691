import type { ApiClients, Customer, Exemption, Transaction } from '../api/index.js';
import { formatMoney, isoExponent, money } from '../domain/money.js';
import { found } from '../processors/outcome.js';
import type { DemoExpectation } from './samples.js';

// What `taxsync demo` finds in the emulator for each record its samples should have made.

/** One expected record and what the emulator holds for it. */
export interface DemoRecord {
  /** The connection whose delivery made it (its id: the shop, account or company). */
  connection: string;
  record: DemoExpectation['record'];
  source: string;
  /** As the connection writes it: its prefix in front of the platform's id. */
  external_id: string;
  /** The platform's own id (what `taxsync trace <connection> <id>` takes). */
  platform_id: string;
  arrived: boolean;
  /** The tax engine's id of the record. */
  tax_id?: string;
  currency?: string;
  /** The tax engine's final_transaction_amount (absent for a transaction without lines). */
  amount?: string;
  /** The tax engine's tax.total_tax. */
  total_tax?: string;
  /** Refunds: the original invoice's external id, the linked fraction and the original's id it names. */
  invoice_external_id?: string;
  refund_linked_percentage?: string;
  created_from?: string;
  /** Refunds: whether created_from is the tax engine id of the invoice the refund belongs to. */
  linked?: boolean;
  /** Customers: name and type; exemptions: what they exempt. */
  detail?: string;
}

/** Reads one expected record from the emulator; `undefined` while it has not arrived. */
export async function lookUp(api: ApiClients, expected: DemoExpectation, source: string, invoiceIds: Map<string, string>): Promise<DemoRecord | undefined> {
  const base = { connection: expected.connection, record: expected.record, source, external_id: expected.external_id, platform_id: expected.platform_id };
  switch (expected.record) {
    case 'customer': {
      const customer = await found(() => api.tax.customers.getByKey(source, expected.external_id));
      return customer && { ...base, arrived: true, tax_id: customer.id, detail: customerDetail(customer) };
    }
    case 'invoice': {
      const tx = await found(() => api.tax.transactions.getByKey(source, expected.external_id));
      if (tx) invoiceIds.set(`${source}/${expected.external_id}`, tx.id);
      return tx && { ...base, ...transactionView(tx) };
    }
    case 'refund': {
      const tx = await found(() => api.tax.transactions.getByKey(source, expected.external_id));
      if (!tx) return undefined;
      const invoiceId =
        invoiceIds.get(`${source}/${expected.invoice_external_id}`) ??
        (await found(() => api.tax.transactions.getByKey(source, expected.invoice_external_id)))?.id;
      return {
        ...base,
        ...transactionView(tx),
        invoice_external_id: expected.invoice_external_id,
        ...(tx.refund_info?.refund_linked_percentage === undefined ? {} : { refund_linked_percentage: tx.refund_info.refund_linked_percentage }),
        ...(tx.created_from ? { created_from: tx.created_from } : {}),
        linked: tx.transaction_type === 'refund' && tx.refund_info?.is_refund_linked === true && invoiceId !== undefined && tx.created_from === invoiceId,
      };
    }
    case 'exemption': {
      const customer = await found(() => api.tax.customers.getByKey(source, expected.customer_external_id));
      if (!customer) return undefined;
      let exemption: Exemption | undefined;
      // Exemptions have no external key in the tax engine: find ours by its customer and certificate.
      for await (const candidate of api.tax.exemptions.iterate({ limit: 100 })) {
        if (candidate.customer_id === customer.id && candidate.certificate_id === expected.certificate_id) exemption = candidate;
      }
      return exemption && { ...base, arrived: true, tax_id: exemption.id, detail: exemptionDetail(exemption, expected.customer_external_id) };
    }
  }
}

function transactionView(tx: Transaction): Omit<DemoRecord, 'connection' | 'record' | 'source' | 'external_id' | 'platform_id'> {
  const currency = tx.currency_details?.currency;
  // A service writes decimals at any scale ("80", "80.000000"); people read them in the currency's minor units.
  const shown = (value: string) => (currency === undefined ? value : formatMoney(money(value), isoExponent(currency)));
  return {
    arrived: true,
    tax_id: tx.id,
    ...(currency ? { currency } : {}),
    // A linked refund the source gives without lines (WooCommerce) is one "Refund" item at its net amount.
    ...(tx.amounts?.final_transaction_amount && (tx.items ?? []).length > 0 ? { amount: shown(tx.amounts.final_transaction_amount) } : {}),
    ...(tx.tax?.total_tax ? { total_tax: shown(tx.tax.total_tax) } : {}),
  };
}

function customerDetail(customer: Customer): string {
  return [customer.name, customer.customer_type].filter(Boolean).join(', ');
}

function exemptionDetail(exemption: Exemption, customerExternalId: string): string {
  const where = exemption.jurisdictions && exemption.jurisdictions.length > 0 ? `${exemption.country} ${exemption.jurisdictions.join(' ')}` : exemption.country;
  return `${exemption.exemption_type ?? ''} ${where ?? ''}, ${exemption.exemption_status ?? 'active'}, customer ${customerExternalId}`.trim();
}
