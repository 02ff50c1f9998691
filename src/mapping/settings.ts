import { z } from 'zod';
import { AddressRequest } from '../api/schemas/tax-engine.js';
import { DECIMAL_PATTERN, Money } from '../domain/money.js';
import { deepFreeze } from '../domain/freeze.js';

/**
 * Mapping settings: the `mapping` key of the TAXSYNC_CONFIG file (docs/mapping.md, "Settings").
 * Every key is optional; unknown keys are errors so a typo never silently falls back to a default.
 * Nested objects use `prefault` so `{}` (or nothing) yields every inner default.
 */

const TaxCode = z.string().trim().min(1, { error: 'must be a non-empty tax code' });

/** A rate as a decimal fraction string in [0, 1]: "0.0825" is 8.25%. */
const Rate = z
  .string()
  .regex(DECIMAL_PATTERN, { error: 'must be a decimal string such as "0.0825"' })
  // zod runs refinements after a failed regex too: only a decimal string reaches Money.
  .refine((v) => !DECIMAL_PATTERN.test(v) || (!new Money(v).isNegative() && new Money(v).lessThanOrEqualTo(1)), {
    error: 'must be a fraction between 0 and 1 (0.0825 = 8.25%), not a percentage',
  });

export const MappingSettings = z.strictObject({
  /** Item tax codes. Precedence per line: by_sku, then by_product, then the line's own code, then default. */
  tax_codes: z
    .strictObject({
      /** SKU → tax code. @defaultValue {} */
      by_sku: z.record(z.string(), TaxCode).default({}),
      /** Platform product id → tax code. @defaultValue {} */
      by_product: z.record(z.string(), TaxCode).default({}),
      /** For lines no other rule classifies. @defaultValue unset (no tax_code sent) */
      default: TaxCode.optional(),
      /** For shipping_fee; wins over the source's shipping code. @defaultValue unset */
      shipping: TaxCode.optional(),
    })
    .prefault({}),
  /** manual_sales_tax_rate per line (bypasses the engine's rate lookup). Sent only when configured. */
  manual_rates: z
    .strictObject({
      /** SKU → rate fraction. @defaultValue {} */
      by_sku: z.record(z.string(), Rate).default({}),
      /** Product id → rate fraction. @defaultValue {} */
      by_product: z.record(z.string(), Rate).default({}),
    })
    .prefault({}),
  /** Origin address sent as addresses.shipping_from on every transaction. @defaultValue unset */
  shipping_from: AddressRequest.optional(),
  /** true: send override_threshold (skip nexus threshold checks). @defaultValue false (omitted) */
  override_threshold: z.boolean().default(false),
  /**
   * Source status → customer_status. A status not listed passes through unchanged; null omits
   * customer_status for that status. @defaultValue {}
   */
  customer_status: z.record(z.string(), z.string().min(1).nullable()).default({}),
});
export type MappingSettings = z.infer<typeof MappingSettings>;
export type MappingSettingsInput = z.input<typeof MappingSettings>;

export const DEFAULT_MAPPING_SETTINGS: MappingSettings = deepFreeze(MappingSettings.parse({}));
