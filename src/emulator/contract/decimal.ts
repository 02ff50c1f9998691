import { Decimal as DecimalJs } from 'decimal.js';
import { minorUnitsOf } from './iso-4217.js';

/**
 * The emulator's arithmetic: decimal.js with room for any amount, rounding half-up wherever it
 * rounds (the emulator's choice, docs/decisions.md "Tax computation, rounding").
 */
export const Dec = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_HALF_UP, toExpNeg: -40, toExpPos: 60 });
export type Dec = DecimalJs;

export const ZERO = new Dec(0);
export const ONE = new Dec(1);

export const dec = (value: string | number | Dec): Dec => new Dec(value);

/** Rounded half-up to `places` decimals. */
export const roundTo = (value: Dec, places: number): Dec => value.toDecimalPlaces(places, Dec.ROUND_HALF_UP);

/** Exactly `places` decimals: "12.50", "1000", "1.250". */
export const fixed = (value: Dec, places: number): string => roundTo(value, places).toFixed(places);

/** The shortest exact form: "0.5", "12", "-0.125" (never "-0"). */
export function plain(value: Dec): string {
  const text = value.toFixed();
  return text === '-0' ? '0' : text;
}

/** Decimals after the point as written ("10.50" → 2, "3" → 0). */
export const placesOf = (text: string): number => text.split('.')[1]?.length ?? 0;

/** The currency's minor unit (ISO 4217 column "minor unit"; 2 when unknown). */
export const currencyPlaces = (currency: string): number => minorUnitsOf(currency) ?? 2;

export const sum = (values: readonly Dec[]): Dec => values.reduce((acc, v) => acc.plus(v), ZERO);
