export * from './common.js';
export * from './tax-engine.js';
export * from './vat.js';
