import type { CustomerBody, ExemptionKind as ExemptionType, ExemptionState as ExemptionStatus } from './contract/tax-requests.js';
import type { FieldErrors } from './contract/primitives.js';
import type {
  FilingState as FilingStatus,
  FiscalRepresentative as FiscalRepresentativeType,
  PaymentResponsible as EntityResponsibleForPayment,
  RegistrationKind as RegistrationType,
} from './contract/vat-requests.js';
import { Collection } from './store.js';
import type { VatSubmission } from './vat/rules.js';

// The records are declared here, not beside their routes: the routes read and write the state,
// so the state importing them back would make a cycle.

/** A stored customer: the upsert body plus the service's fields. */
export type CustomerRecord = CustomerBody & { id: string; created_at: string; updated_at: string };

/** A stored exemption; defaults filled in (jurisdictions [], end_date null, status active). */
export interface ExemptionRecord {
  id: string;
  customer_id: string;
  country: string;
  jurisdictions: string[];
  start_date: string;
  end_date: string | null;
  certificate_id?: string;
  exemption_type: ExemptionType;
  exemption_status: ExemptionStatus;
  created_at: string;
  updated_at: string;
}

/** A stored transaction: what GET answers, computed when it was upserted. */
export interface TransactionRecord {
  id: string;
  source: string;
  external_id: string;
  transaction_type: string;
  created_from: string | null;
  refund_info?: { is_refund_linked: boolean; refund_linked_percentage?: string };
  currency_details: { currency: string; manual_exchange_rate?: string; exchange_rate_info: null };
  tax: { total_tax: string; effective_tax_rate: string };
  [field: string]: unknown;
}

export interface FilingFileRecord {
  id: string;
  /** `audit_trail` is a file type added later than the document: listed only when the filing's variety says so. */
  file_type: 'vat_return' | 'submission_receipt' | 'acknowledgment' | 'audit_trail';
  filename: string;
  created_at: string;
}

export interface DraftBox {
  box_number: string;
  description: string;
  value: string;
  currency: string;
}

export interface FilingRecord {
  id: string;
  registration_filing_type: string;
  reporting_period_start: string;
  reporting_period_end: string;
  entity_jurisdiction: string;
  currency: string;
  status: FilingStatus;
  due_date: string;
  submitted_date: string | null;
  filing_reference: string | null;
  created_at: string;
  updated_at: string;
  approved_by?: string;
  approval_notes?: string;
  approved_at?: string;
  files: FilingFileRecord[];
  /** Frozen at approval; until then the boxes follow the submitted transactions. */
  frozen?: { boxes: DraftBox[]; total_vat_due: string; total_net: string };
}

/** One per (entity, taxable jurisdiction); created with the first registration of the pair. */
export interface EntityJurisdiction {
  id: string;
  entity: string;
  taxable_jurisdiction: string;
}

export interface RegistrationRecord {
  id: string;
  entity: string;
  /** ISO code, uppercase. */
  taxable_jurisdiction: string;
  entity_jurisdiction: string;
  number: string;
  number_local: string;
  fiscal_code: string;
  date_of_registration: string | null;
  date_registration_closed: string | null;
  date_of_filing_start: string | null;
  fiscal_representative_type: FiscalRepresentativeType;
  registration_type: RegistrationType;
  direct_debit_setup: boolean;
  entity_responsible_for_payment: EntityResponsibleForPayment;
  iban: string;
  created_at: string;
  updated_at: string;
}

/** A stored VAT transaction: the request (strings trimmed) plus the service's fields. */
export type VatTransactionRecord = VatSubmission & {
  id: string;
  validity_status: 'valid' | 'warning';
  compliance_status: 'valid' | 'warning';
  committed: boolean;
  created_at: string;
  /** Present when the submission was processed with warnings (answered 200). */
  warnings?: FieldErrors;
};

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
