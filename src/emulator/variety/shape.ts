import { Dec, placesOf } from '../contract/decimal.js';
import { WITHOUT_POSTCODES } from '../contract/iso-3166.js';
import type { Dice } from './dice.js';

/** Helpers of the variations: plain JSON objects in, plain JSON objects out. */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Optional fields the answer does not carry become explicit nulls (knob `nulls`). */
export function nullsFor(target: Json, fields: readonly string[], dice: Dice): void {
  if (!dice.on('nulls')) return;
  for (const field of fields) if (!(field in target)) target[field] = null;
}

/** Fields a later version of the service added (knob `extras`). */
export function extrasFor(target: Json, extras: Json, dice: Dice): void {
  if (dice.on('extras')) for (const [key, value] of Object.entries(extras)) if (!(key in target)) target[key] = value;
}

const SCALES = ['canonical', 'shortest', 'one', 'six'] as const;

/** The same number written with another scale: "10.00" as "10", "10.0" or "10.000000". */
export function rescale(text: string, scale: (typeof SCALES)[number]): string {
  if (scale === 'canonical' || !/^-?\d+(\.\d+)?$/.test(text)) return text;
  const value = new Dec(text);
  const shortest = value.toFixed() === '-0' ? '0' : value.toFixed();
  if (scale === 'shortest') return shortest;
  const places = Math.max(placesOf(shortest), scale === 'one' ? 1 : 6);
  return value.toFixed(places);
}

/** Decimal strings under `fields` of `target` written with a scale drawn per field (knob `decimals`). */
export function decimalsFor(target: Json | undefined, fields: readonly string[], dice: Dice, path: string): void {
  if (target === undefined || !dice.on('decimals')) return;
  for (const field of fields) {
    const value = target[field];
    if (typeof value === 'string') target[field] = rescale(value, dice.pick(`scale:${path}.${field}`, SCALES));
  }
}

/** Every string value of a map (manual rates) rescaled. */
export function decimalMapFor(target: unknown, dice: Dice, path: string): void {
  if (isObject(target)) decimalsFor(target, Object.keys(target), dice, path);
}

/**
 * An address as a service outside the US writes it: `state: null` where none was given (knob
 * `addresses`; strict leaves it absent), `zip: null` where the country has no postal codes; unset fields
 * as null (knob `nulls`); an extra `x_region` (knob `extras`).
 */
export function varyAddress(address: unknown, dice: Dice): unknown {
  if (!isObject(address)) return address;
  const out: Json = { ...address };
  const country = typeof out.country === 'string' ? out.country : undefined;
  if (dice.on('addresses') && country !== undefined && country !== 'US') {
    if (out.state === undefined || out.state === '') out.state = null;
    if (WITHOUT_POSTCODES.has(country) && (out.zip === undefined || out.zip === '')) out.zip = null;
  }
  nullsFor(out, ['street', 'city', 'state', 'zip'], dice);
  extrasFor(out, { x_region: country === undefined ? null : country === 'US' ? 'us' : 'intl' }, dice);
  return out;
}
