export { createEmulator, startEmulator } from './server.js';
export type { Emulator } from './emulator.js';
export type { EmulatorOptions, EmulatorSettings } from './options.js';
export { VARIETY_MODES, type VarietyMode } from './variety/dice.js';
export { DEFAULT_CLIENT, REGISTRATION_PERMISSIONS, type EmulatorClient } from './auth.js';
export { FaultRule, type FaultRuleInput } from './faults.js';
export type { RequestLogEntry } from './request-log.js';
export { DEFAULT_TAX_TABLE, type TaxTable } from './tax-engine/tax-table.js';
export { VAT_TRANSACTION_TYPES } from './vat/reference-data.js';
