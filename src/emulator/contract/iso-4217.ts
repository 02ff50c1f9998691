/**
 * ISO 4217 currencies with their minor unit, as the emulator reads "currency is a valid ISO 4217
 * code" (VAT rule 5) and the tax engine's `currency_details.currency`. Active codes of list one,
 * fund codes included; precious metals, bond-market units, XDR, XSU, XUA, the testing code XTS and
 * "no currency" XXX are not currencies an invoice is written in and are refused. ANG is kept while
 * invoices from before its replacement by XCG (2025) are still submitted.
 */

const ZERO_DECIMALS = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF';
const THREE_DECIMALS = 'BHD IQD JOD KWD LYD OMR TND';
const FOUR_DECIMALS = 'CLF UYW';
const TWO_DECIMALS = [
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN',
  'BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD',
  'CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK',
  'DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD',
  'HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT',
  'LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN',
  'NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB',
  'SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL',
  'THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG',
].join(' ');

const MINOR_UNITS: ReadonlyMap<string, number> = new Map(
  (
    [
      [ZERO_DECIMALS, 0],
      [TWO_DECIMALS, 2],
      [THREE_DECIMALS, 3],
      [FOUR_DECIMALS, 4],
    ] as const
  ).flatMap(([codes, places]) => codes.split(' ').map((code): [string, number] => [code, places])),
);

export const isCurrency = (code: string): boolean => MINOR_UNITS.has(code);

/** Decimals of the currency's minor unit, undefined for a code that is not a currency. */
export const minorUnitsOf = (code: string): number | undefined => MINOR_UNITS.get(code.toUpperCase());

export const CURRENCY_COUNT = MINOR_UNITS.size;
