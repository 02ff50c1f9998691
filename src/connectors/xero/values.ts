import type { Address } from '../../domain/events.js';
import { countryCode } from '../shared/countries.js';
import { compact, nonBlank, nonEmpty } from '../shared/fields.js';
import type { XeroAddress, XeroContact, XeroInvoiceAddress } from './schemas.js';

/**
 * Xero's addresses and contacts as canonical ones, for map.ts. PURE. Country is free text ("New
 * Zealand", "NZ"): read with the shared countryCode.
 */

/** A Xero address as a canonical one: AddressLine1–4 joined into street; undefined when empty. */
export function address(a: XeroAddress | XeroInvoiceAddress | undefined): Address | undefined {
  if (a === undefined) return undefined;
  const lines = [a.AddressLine1, a.AddressLine2, a.AddressLine3, a.AddressLine4].map(nonBlank).filter((l) => l !== undefined);
  return nonEmpty(
    compact<Address>({
      street: lines.length > 0 ? lines.join(', ') : undefined,
      city: nonBlank(a.City),
      state: nonBlank(a.Region),
      zip: nonBlank(a.PostalCode),
      country: countryCode(a.Country),
    }),
  );
}

/**
 * A contact's addresses: POBOX (Xero's postal address, the one invoices are sent to) is billing;
 * STREET (the physical address, where goods go) is shipping. Undefined when neither has content.
 */
export function contactAddresses(contact: XeroContact): { billing?: Address; shipping?: Address } | undefined {
  const of = (type: string) => address(contact.Addresses.find((a) => a.AddressType?.toUpperCase() === type));
  return nonEmpty(compact({ billing: of('POBOX'), shipping: of('STREET') }));
}

/** Name, else "FirstName LastName". */
export function contactName(contact: XeroContact): string | undefined {
  const parts = [nonBlank(contact.FirstName), nonBlank(contact.LastName)].filter((p) => p !== undefined);
  return nonBlank(contact.Name) ?? (parts.length > 0 ? parts.join(' ') : undefined);
}
