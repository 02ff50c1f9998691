import { VARIETY_MODES, type VarietyMode } from '../../src/emulator/index.js';

/**
 * The variety of every emulator the test helpers start: `varied` unless
 * TAXSYNC_TEST_EMULATOR_VARIETY says `strict` or `max` (docs/emulator.md, "Variety"). Read only by
 * the test helpers, so the whole suite can be run against canonical or fully varied answers.
 */
export function testVariety(): VarietyMode {
  const value = process.env.TAXSYNC_TEST_EMULATOR_VARIETY;
  if (value === undefined || value === '') return 'varied';
  if (!(VARIETY_MODES as readonly string[]).includes(value)) {
    throw new Error(`TAXSYNC_TEST_EMULATOR_VARIETY must be one of ${VARIETY_MODES.join(', ')}, not ${value}`);
  }
  return value as VarietyMode;
}
