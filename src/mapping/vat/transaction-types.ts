import type { VatRateType } from '../../api/schemas/vat.js';
import type { VatSettings } from '../vat-settings.js';
import type { Supply } from './supply.js';

/** The transaction type of a VAT submission, chosen by name from the service's list (docs/vat.md, "Transaction types"). PURE. */

export interface TransactionTypeRef {
  id: string;
  name: string;
}

/** The id of the type with this name (trimmed, case-insensitive), or of this id; a problem when absent or ambiguous. */
export function transactionTypeId(types: readonly TransactionTypeRef[], nameOrId: string): { id: string } | { problem: string } {
  const wanted = nameOrId.trim().toLowerCase();
  const byId = types.find((t) => t.id.toLowerCase() === wanted);
  if (byId !== undefined) return { id: byId.id };
  const ids = [...new Set(types.filter((t) => t.name.trim().toLowerCase() === wanted).map((t) => t.id))];
  if (ids.length === 1) return { id: ids[0] as string };
  const names = types.map((t) => t.name).join(', ') || 'none';
  if (ids.length === 0) return { problem: `the transaction types list has no type named "${nameOrId}" (it has: ${names})` };
  return { problem: `the transaction types list has ${ids.length} types named "${nameOrId}" (${ids.join(', ')})` };
}

/**
 * The type name of one group (docs/vat.md, "Transaction types"): vat.transaction_type when the ERP
 * states it; zero-rated intra-EU → Intra-EU Supplies; zero-rated export → Exports when the list
 * has it; otherwise B2B Sales with a partner VAT number, B2C Sales without. Import Services (a
 * purchase under the reverse charge) is never derived from a sales invoice: only stated.
 */
export function transactionTypeName(
  supply: Supply,
  rateType: VatRateType,
  settings: VatSettings,
  types: readonly TransactionTypeRef[],
): { name: string; note?: string } {
  const names = settings.transaction_types;
  const sales = supply.b2b ? names.b2b : names.b2c;
  if (rateType === 'zero_rated' && supply.kind === 'intra_eu') return { name: names.intra_eu };
  if (rateType === 'zero_rated' && supply.kind === 'export') {
    if ('id' in transactionTypeId(types, names.export)) return { name: names.export };
    return { name: sales, note: `zero-rated export sent as ${sales}: the transaction types list has no "${names.export}"` };
  }
  return { name: sales };
}
