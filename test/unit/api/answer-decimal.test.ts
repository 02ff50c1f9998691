import { describe, expect, it } from 'vitest';
import { AnswerDecimal } from '../../../src/api/schemas/common.js';
import { DECIMAL_PATTERN, Money } from '../../../src/domain/money.js';

/** A small seeded generator (mulberry32): the same seed gives the same cases, printed on failure. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * (max + 1));
  const digits = (n: number) => Array.from({ length: n }, () => String(int(9))).join('');
  return { int, digits };
}

const SEED = Number(process.env.TAXSYNC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
const RUNS = 2_000;

describe('decimals in answers', () => {
  it(`reads a plain decimal of any scale exactly as written, and every other spelling of it as the same value in plain notation (seed ${SEED})`, () => {
    const g = generator(SEED);
    for (let run = 0; run < RUNS; run++) {
      const sign = g.int(1) === 1 ? '-' : '';
      const whole = g.int(3) === 0 ? '0' : String(g.int(9) + 1) + g.digits(g.int(12));
      const fraction = g.digits(g.int(20));
      const plain = `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
      const value = new Money(plain);
      const where = `seed ${SEED}, run ${run}, ${plain}`;

      expect(AnswerDecimal.parse(plain), where).toBe(plain);
      // The same number as decimal libraries may print it: a plus sign, no leading zero, an exponent.
      const shift = g.int(12) - 6;
      const spellings = [
        ...(sign === '' ? [`+${plain}`] : []),
        ...(whole === '0' && fraction !== '' ? [`${sign}.${fraction}`] : []),
        `${sign}${value.abs().times(new Money(10).pow(-shift)).toFixed()}E${shift >= 0 ? '+' : ''}${shift}`,
      ];
      for (const spelling of spellings) {
        const read = AnswerDecimal.parse(spelling);
        expect(DECIMAL_PATTERN.test(read), `${where} read from ${spelling} as ${read}`).toBe(true);
        expect(new Money(read).eq(value), `${where} read from ${spelling} as ${read}`).toBe(true);
      }
    }
  });

  it(`reads a JSON number as exactly the decimal written, up to 15 significant digits (seed ${SEED})`, () => {
    const g = generator(SEED);
    for (let run = 0; run < RUNS; run++) {
      const sign = g.int(1) === 1 ? '-' : '';
      const wholeDigits = g.int(13);
      const whole = wholeDigits === 0 ? '0' : String(g.int(8) + 1) + g.digits(wholeDigits - 1);
      const fraction = g.digits(g.int(15 - Math.max(wholeDigits, 1)));
      const written = `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
      // What JSON.parse makes of the literal in an answer's body.
      const read = AnswerDecimal.parse(JSON.parse(written) as number);
      const where = `seed ${SEED}, run ${run}, ${written} read as ${read}`;
      expect(DECIMAL_PATTERN.test(read), where).toBe(true);
      expect(new Money(read).eq(new Money(written)), where).toBe(true);
    }
    expect(AnswerDecimal.parse(1e21)).toBe('1000000000000000000000');
    expect(AnswerDecimal.parse(1.5e-7)).toBe('0.00000015');
  });

  it('does not read a number with more digits than a double holds, a blank, or what is not a number', () => {
    for (const bad of [0.1 + 0.2, 2 ** 60 + 1, Number.NaN, '', ' ', '1,5', '0x10', 'NaN', 'Infinity', '1e', '--1', '1.2.3']) {
      expect(AnswerDecimal.safeParse(bad).success, String(bad)).toBe(false);
    }
  });
});
