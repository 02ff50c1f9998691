import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, TaxsyncError, isTaxsyncError } from '../../src/domain/errors.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map(
  [...doc.matchAll(/^\| `([A-Z_]+)` \| ([a-z_]+) \| (yes|no) \|/gm)].map((m) => [m[1]!, { errorClass: m[2], retry: m[3] }]),
);

describe('docs/errors.md', () => {
  it('lists every error code with its class and retry decision', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect(rows.get(code), `docs/errors.md has no row for ${code}`).toEqual({
        errorClass: info.errorClass,
        retry: info.retryable ? 'yes' : 'no',
      });
    }
  });

  it('lists no code the program does not have', () => {
    expect([...rows.keys()].filter((code) => !(code in ERROR_CODES))).toEqual([]);
  });
});

describe('TaxsyncError', () => {
  it('takes its retry decision from the code unless told otherwise', () => {
    expect(new TaxsyncError('API_SERVER_ERROR', 'x').retryable).toBe(true);
    expect(new TaxsyncError('API_INVALID', 'x').retryable).toBe(false);
    expect(new TaxsyncError('API_SERVER_ERROR', 'x', { retryable: false }).retryable).toBe(false);
  });

  it('is recognised by name when it crossed a module boundary', () => {
    const foreign = Object.assign(new Error('x'), { name: 'TaxsyncError', code: 'API_INVALID' });
    expect(isTaxsyncError(foreign)).toBe(true);
    expect(isTaxsyncError(new Error('x'))).toBe(false);
  });
});
