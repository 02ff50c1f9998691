export * from './common.js';
export * from './tax-engine.js';
export * from './tax-answers.js';
export * from './vat.js';
export * from './vat-answers.js';
