import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TaxsyncError } from '../domain/errors.js';
import { SOURCES } from '../api/schemas/common.js';
import { MappingSettings } from '../mapping/settings.js';
import { VatSettings } from '../mapping/vat-settings.js';
import { describeIssues } from '../domain/field-errors.js';

/**
 * Mapping settings from the JSON file named by TAXSYNC_CONFIG (docs/configuration.md, "Settings
 * file"). Unknown keys are errors, so a typo never silently falls back to a default.
 */

/** The tax engine's 10 source values: `api` plus the nine platforms DESIGN.md assumes. */
export const DEFAULT_ALLOWED_SOURCES = SOURCES;

const SourceName = z.string().regex(/^[a-z][a-z0-9_]*$/, { error: 'must be a lowercase source identifier' });

export const Settings = z
  .strictObject({
    /** The source each connector's records carry; default: the connector id, `api` for the ERP. */
    sources: z.record(z.string(), SourceName).default({}),
    /** The source values the tax engine accepts. */
    allowed_sources: z.array(SourceName).min(1).default([...DEFAULT_ALLOWED_SOURCES]),
    /** Tax codes, shipping origin, manual rates… (docs/mapping.md, "Settings"). */
    mapping: MappingSettings.prefault({}),
    /** VAT registrations and submission rules (docs/vat.md); VAT is off while none is configured. */
    vat: VatSettings.prefault({}),
  })
  .superRefine((s, ctx) => {
    for (const [connector, source] of Object.entries(s.sources)) {
      if (!s.allowed_sources.includes(source)) {
        ctx.addIssue({
          code: 'custom',
          path: ['sources', connector],
          message: `"${source}" is not one of the allowed sources (${s.allowed_sources.join(', ')})`,
        });
      }
    }
  });
export type Settings = z.infer<typeof Settings>;

export const DEFAULT_SETTINGS: Settings = Settings.parse({});

export function parseSettings(raw: unknown, origin = 'settings'): Settings {
  const result = Settings.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => describeIssues([issue], { whole: '(settings)', sentence: true }));
  throw new TaxsyncError('CONFIG_INVALID', `invalid ${origin}: ${problems.join('; ')}`, { details: { problems } });
}

/** Reads the settings file, or the defaults when no file is configured. */
export function loadSettings(path: string | undefined): Settings {
  if (path === undefined) return DEFAULT_SETTINGS;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new TaxsyncError('CONFIG_INVALID', `TAXSYNC_CONFIG: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TaxsyncError('CONFIG_INVALID', `TAXSYNC_CONFIG: ${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseSettings(json, `TAXSYNC_CONFIG file ${path}`);
}
