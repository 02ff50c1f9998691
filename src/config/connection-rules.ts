import type { ConnectorConfig } from '../connectors/types.js';
import { namesRegistration, registrationRef, vatEnabled, type VatSettings } from '../mapping/vat-settings.js';
import { isActive, type Connection } from './connection-list.js';

/**
 * The rules between connections (docs/connections.md): no two of one source may write the same
 * record key, and no two may claim the same VAT invoice number under one registration.
 */

/**
 * Pairs of connections of one source whose keys could collide: equal prefixes, or one prefix in
 * front of the other where the difference can begin one of the platform's own ids (WooCommerce and
 * Shopify ids are numbers, so "" and "fr-" are apart; ids a seller chooses can begin with anything).
 */
export function connectionCollisions(list: readonly Connection[], connectors: readonly ConnectorConfig[]): string[] {
  const active = list.filter(isActive);
  const problems: string[] = [];
  for (const [i, a] of active.entries()) {
    for (const b of active.slice(i + 1)) {
      if (a.source !== b.source) continue;
      const [short, long] = a.externalIdPrefix.length <= b.externalIdPrefix.length ? [a, b] : [b, a];
      if (!long.externalIdPrefix.startsWith(short.externalIdPrefix)) continue;
      const difference = long.externalIdPrefix.slice(short.externalIdPrefix.length);
      const ids = connectors.find((c) => c.id === short.platform)?.externalIds;
      const pair = `connections "${a.id}" and "${b.id}" both write source "${a.source}"`;
      if (difference === '') {
        problems.push(`${pair} with the external_id_prefix "${a.externalIdPrefix}": their records would overwrite each other; give one of them another prefix`);
      } else if (ids === undefined || ids.canBegin(difference)) {
        const why = ids === undefined ? `${short.platform} ids can begin with anything` : `a ${short.platform} id (${ids.described}) can begin with "${difference}"`;
        problems.push(`${pair}, and "${short.id}"'s ids could carry "${long.id}"'s prefix "${long.externalIdPrefix}" (${why}): give them prefixes neither of which begins the other`);
      }
    }
  }
  return problems;
}

/** The VAT invoice-number prefix a connection's submissions carry. */
export function invoiceNumberPrefixOf(connection: Connection, vat: VatSettings): string {
  return connection.vat?.invoiceNumberPrefix ?? vat.invoice_number.prefix_by_source[connection.source] ?? '';
}

/**
 * A connection's VAT facts against the settings: every registration it names exists, and two
 * connections that can submit under one registration never number their invoices alike (two shops'
 * invoice 1001 would be one number there: the second is refused by the VAT ledger).
 */
export function connectionVatProblems(list: readonly Connection[], vat: VatSettings): string[] {
  const problems: string[] = [];
  const registrationsOf = new Map<string, Set<string>>();
  for (const c of list.filter(isActive)) {
    const named = c.vat?.registrations;
    for (const name of named ?? []) {
      if (!vat.registrations.some((r) => namesRegistration(name, r))) {
        problems.push(`connection "${c.id}": vat.registrations names "${name}", which no configured VAT registration is (${vat.registrations.map(registrationRef).join(', ') || 'none is configured'})`);
      }
    }
    const refs = vat.registrations.filter((r) => named === undefined || named.some((name) => namesRegistration(name, r))).map(registrationRef);
    registrationsOf.set(c.id, new Set(refs));
  }
  if (!vatEnabled(vat) || vat.invoice_number.from !== 'number') return problems;
  const active = list.filter(isActive);
  for (const [i, a] of active.entries()) {
    for (const b of active.slice(i + 1)) {
      const prefix = invoiceNumberPrefixOf(a, vat);
      if (prefix !== invoiceNumberPrefixOf(b, vat) || a.platform !== b.platform) continue;
      const shared = [...(registrationsOf.get(a.id) ?? [])].filter((ref) => registrationsOf.get(b.id)?.has(ref));
      if (shared.length === 0) continue;
      problems.push(
        `connections "${a.id}" and "${b.id}" can both submit VAT under ${shared.join(', ')} with invoice numbers prefixed "${prefix}": two ${a.platform} documents numbered alike would claim one number there; give one of them vat.invoice_number_prefix (or vat.registrations apart)`,
      );
    }
  }
  return problems;
}
