import { Collection } from './store.js';
import type { CustomerRecord } from './tax-engine/customers.js';
import type { ExemptionRecord } from './tax-engine/exemptions.js';
import type { TransactionRecord } from './tax-engine/transactions.js';
import type { FilingRecord } from './vat/filings.js';
import type { EntityJurisdiction, RegistrationRecord } from './vat/registrations.js';
import type { VatTransactionRecord } from './vat/transactions.js';

/** Everything the emulator stores, in memory. `clear()` is the control API's reset. */
export function createState() {
  return {
    customers: new Collection<CustomerRecord>(),
    exemptions: new Collection<ExemptionRecord>(),
    transactions: new Collection<TransactionRecord>(),
    /** Keyed by `entity_jurisdiction` + invoice number (rule 7). */
    vatTransactions: new Collection<VatTransactionRecord>(),
    registrations: new Collection<RegistrationRecord>(),
    /** By id; one per (entity, taxable jurisdiction), created with the first registration. */
    entityJurisdictions: new Map<string, EntityJurisdiction>(),
    filings: new Collection<FilingRecord>(),
    clear() {
      this.customers.clear();
      this.exemptions.clear();
      this.transactions.clear();
      this.vatTransactions.clear();
      this.registrations.clear();
      this.entityJurisdictions.clear();
      this.filings.clear();
    },
  };
}

export type EmulatorState = ReturnType<typeof createState>;
