import type { AddressBody as AddressRequest } from '../contract/tax-requests.js';
import type { Locality, StateEntry, TaxTable } from './tax-table.js';

/**
 * A stand-in for the service's geocoding: finds the state and locality of an address in the tax
 * table and scores how complete the match is (docs/emulator.md, "Address matching").
 */

export interface TaxLocation {
  /** Uppercase ISO code, undefined when the address gives none and no table state matched. */
  country: string | undefined;
  /** The two-letter state code as submitted or resolved, also for states outside the table. */
  stateCode: string | undefined;
  state: StateEntry | undefined;
  locality: Locality | undefined;
}

export interface MatchedAddress {
  address: AddressRequest;
  latitude: string | null;
  longitude: string | null;
  /** "1.00" = exact; below 0.70 sets low_confidence_warning. */
  confidence: string;
  match_level: 'street' | 'zip' | 'city' | 'state' | 'country' | 'unmatched';
  address_corrected: boolean;
  low_confidence_warning: boolean;
}

export const LOW_CONFIDENCE_BELOW = 0.7;

const clean = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
const same = (a: string | undefined, b: string | undefined) => (a ?? '').toLowerCase() === (b ?? '').toLowerCase();

function findState(table: TaxTable, state: string | undefined): StateEntry | undefined {
  if (state === undefined) return undefined;
  const upper = state.toUpperCase();
  return table.states[upper] ?? Object.values(table.states).find((s) => same(s.name, state));
}

export function geocode(address: AddressRequest, table: TaxTable): { location: TaxLocation; matched: MatchedAddress } {
  const submitted = {
    street: clean(address.street),
    city: clean(address.city),
    state: clean(address.state),
    zip: clean(address.zip),
    country: clean(address.country),
  };
  const state = findState(table, submitted.state);
  const country = submitted.country ?? (state !== undefined ? table.country : undefined);
  const result = (
    level: MatchedAddress['match_level'],
    /** In hundredths, so the 0.70 line is compared exactly. */
    confidence: number,
    standard: AddressRequest,
    coords: { latitude: string; longitude: string } | undefined,
    location: Partial<TaxLocation>,
  ) => {
    const corrected = (['street', 'city', 'state', 'zip', 'country'] as const).some((k) => (standard[k] ?? '') !== (address[k] ?? ''));
    return {
      location: { country, stateCode: undefined, state: undefined, locality: undefined, ...location },
      matched: {
        address: standard,
        latitude: coords?.latitude ?? null,
        longitude: coords?.longitude ?? null,
        confidence: (confidence / 100).toFixed(2),
        match_level: level,
        address_corrected: corrected,
        low_confidence_warning: confidence < LOW_CONFIDENCE_BELOW * 100,
      },
    };
  };
  const dropUndefined = (a: AddressRequest): AddressRequest =>
    Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined));

  if (country === undefined) return result('unmatched', 0, dropUndefined(submitted), undefined, {});
  if (country !== table.country) return result('country', 30, dropUndefined({ ...submitted, country }), undefined, {});
  if (state === undefined) {
    const stateCode = submitted.state?.toUpperCase();
    return result(stateCode === undefined ? 'unmatched' : 'state', stateCode === undefined ? 0 : 50, dropUndefined({ ...submitted, country }), undefined, {
      stateCode,
    });
  }

  const zip5 = submitted.zip?.slice(0, 5);
  const byZip = zip5 === undefined ? undefined : state.localities.find((l) => l.zips.includes(zip5));
  const byCity = submitted.city === undefined ? undefined : state.localities.find((l) => same(l.city, submitted.city));
  const locality = byZip ?? byCity;
  const located = { stateCode: state.code, state, locality };
  if (locality === undefined) {
    return result('state', 50, dropUndefined({ ...submitted, state: state.code, country }), state, located);
  }
  const standard = dropUndefined({ ...submitted, city: locality.city, state: state.code, zip: byZip ? zip5 : submitted.zip, country });
  if (byZip !== undefined) {
    const cityMismatch = submitted.city !== undefined && !same(submitted.city, locality.city);
    const base = submitted.street !== undefined ? 100 : 90;
    return result(submitted.street !== undefined ? 'street' : 'zip', base - (cityMismatch ? 20 : 0), standard, locality, located);
  }
  // Found by city alone: a ZIP that is given but unknown lowers the confidence below the warning line.
  return result('city', submitted.zip === undefined ? 75 : 60, standard, locality, located);
}
