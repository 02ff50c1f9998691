import { describe, expect, it } from 'vitest';
import { recordKeyString } from '../../../src/domain/record-key.js';
import { createKeys } from '../../../src/queue/keys.js';

describe('record keys', () => {
  it('building a key from an id with a lone surrogate is an INVALID_PAYLOAD naming the field, never a URIError', () => {
    expect(() => recordKeyString({ kind: 'vat', source: 'api', external_id: 'INV-\ud800' })).toThrow(
      expect.objectContaining({ code: 'INVALID_PAYLOAD', fields: { external_id: [expect.stringMatching(/well-formed Unicode/)] } }),
    );
    const keys = createKeys('{t}');
    expect(() => keys.vatLedger('ej', 'INV-\udfff')).toThrow(expect.objectContaining({ code: 'INVALID_PAYLOAD', fields: { invoice_number: [expect.any(String)] } }));
    expect(() => keys.delivery('erp', 'evt-\ud800')).toThrow(expect.objectContaining({ code: 'INVALID_PAYLOAD', fields: { id: [expect.any(String)] } }));
    // A surrogate pair is well-formed: encoded as usual.
    expect(recordKeyString({ kind: 'vat', source: 'api', external_id: 'INV-😀' })).toBe('vat|api|INV-%F0%9F%98%80');
  });
});
