import { z } from 'zod';
import { Secret } from './secret.js';

/**
 * The zod fields of environment variables that more than one room declares: src/config/load.ts
 * and each connector's `config.ts` (its webhook secret, its platform API). Pure: no process.env.
 */

export const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** `a, b`: every non-empty entry, each a Secret (two during a rotation); unset: none. */
export const secretList = z.preprocess(
  blankToUndefined,
  z
    .string()
    .optional()
    .transform((v) =>
      v === undefined
        ? []
        : v
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s.length > 0)
            .map((s) => new Secret(s)),
    ),
);

/** One Secret, or undefined when unset or blank. */
export const secret = z.preprocess(blankToUndefined, z.string().optional().transform((v) => (v === undefined ? undefined : new Secret(v))));
