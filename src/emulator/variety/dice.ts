import { createHash } from 'node:crypto';

/**
 * How much the emulator's answers vary (docs/emulator.md, "Variety"):
 * - `varied` (default): each record draws, once and for good, which kinds of legitimate variation
 *   its answers carry, as a real service's records differ from each other;
 * - `strict`: the canonical answer, byte for byte the same every time;
 * - `max`: every variation at once, on every record.
 */
export const VARIETY_MODES = ['varied', 'strict', 'max'] as const;
export type VarietyMode = (typeof VARIETY_MODES)[number];

/** The kinds of variation, each drawn per record. */
export const KNOBS = ['nulls', 'extras', 'omissions', 'addresses', 'enums', 'decimals', 'numbers'] as const;
export type Knob = (typeof KNOBS)[number];

/** The draws of one record: the same key and seed always give the same answers. */
export interface Dice {
  readonly mode: VarietyMode;
  on(knob: Knob): boolean;
  /** One of `options`; options[0] is the canonical one, which `max` never picks. */
  pick<T>(salt: string, options: readonly [T, ...T[]]): T;
}

function draw(seed: number, key: string, salt: string): number {
  return createHash('sha256').update(`${seed}\u0000${key}\u0000${salt}`).digest().readUInt32BE(0);
}

export function diceFor(mode: VarietyMode, seed: number, key: string): Dice {
  return {
    mode,
    on: (knob) => (mode === 'max' ? true : mode === 'strict' ? false : draw(seed, key, knob) % 2 === 1),
    pick(salt, options) {
      if (mode === 'strict' || options.length === 1) return options[0];
      const n = draw(seed, key, salt);
      return mode === 'max' ? (options[1 + (n % (options.length - 1))] as (typeof options)[number]) : (options[n % options.length] as (typeof options)[number]);
    },
  };
}

/** The emulator's current variety: a mode and a seed, changeable at run time (control API). */
export interface Variety {
  mode(): VarietyMode;
  seed(): number;
  set(mode: VarietyMode, seed?: number): void;
  /** Back to the mode and seed the emulator was built with. */
  reset(): void;
  dice(key: string): Dice;
}

export function createVariety(initialMode: VarietyMode, initialSeed: number): Variety {
  let mode = initialMode;
  let seed = initialSeed;
  return {
    mode: () => mode,
    seed: () => seed,
    set(next, nextSeed) {
      mode = next;
      if (nextSeed !== undefined) seed = nextSeed;
    },
    reset() {
      mode = initialMode;
      seed = initialSeed;
    },
    dice: (key) => diceFor(mode, seed, key),
  };
}
