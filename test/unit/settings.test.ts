import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, parseSettings } from '../../src/config/settings.js';
import { hasCode } from '../../src/domain/errors.js';

describe('settings file', () => {
  it('accepts the example in docs/configuration.md', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const example = /## Settings file[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)?.[1];
    const settings = parseSettings(JSON.parse(example!));
    expect(settings.sources.erp).toBe('netsuite');
    expect(settings.vat.registrations).toHaveLength(1);
  });

  it('defaults to no VAT and connector ids as sources', () => {
    expect(DEFAULT_SETTINGS.sources).toEqual({});
    expect(DEFAULT_SETTINGS.vat.registrations).toEqual([]);
  });

  it('names unknown keys and a source the tax engine does not know', () => {
    try {
      parseSettings({ sourcse: {}, sources: { erp: 'sap' } });
      throw new Error('expected an error');
    } catch (error) {
      expect(hasCode(error, 'CONFIG_INVALID')).toBe(true);
      expect((error as Error).message).toContain('sourcse');
      expect((error as Error).message).toContain('sources.erp');
    }
  });
});
