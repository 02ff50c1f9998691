/** Reference data shared by local VAT validation (src/mapping) and the emulator. PURE. */
export { EU_MEMBERS, ISO_COUNTRIES, isEuMember, isIsoCountry } from './countries.js';
export { ISO_CURRENCIES, isIsoCurrency } from './currencies.js';
export { VAT_FORMATS, hasVatNumberFormat, vatNumberProblem, type VatNumberFormat } from './vat-numbers.js';
