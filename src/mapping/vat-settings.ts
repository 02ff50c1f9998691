import { z } from 'zod';
import { REGISTRATION_STATUSES, RegistrationType, VAT_RATE_TYPES } from '../api/schemas/vat.js';
// The registration as read is what the mapping matches configured registrations against.
import type { Registration } from '../api/schemas/vat-answers.js';
import { DECIMAL_PATTERN, Money } from '../domain/money.js';
import type { ConnectionVat } from '../domain/connection.js';
import { EU_MEMBERS, ISO_COUNTRIES } from '../domain/reference/countries.js';

/**
 * VAT settings: the `vat` key of the TAXSYNC_CONFIG file (docs/vat.md, "Settings"). VAT is off
 * while `registrations` is empty. Unknown keys are errors, so a typo never silently falls back to a
 * default; nested objects use `prefault` so `{}` (or nothing) yields every inner default.
 */

export const VAT_SCHEMES = ['domestic', 'oss'] as const;
/** `domestic`: the seller's registration in one country; `oss`: the one-stop shop for EU distance sales. */
export type VatScheme = (typeof VAT_SCHEMES)[number];

export const REPORTING_PERIODS = ['monthly', 'quarterly'] as const;
export type ReportingPeriod = (typeof REPORTING_PERIODS)[number];

export const SUBMIT_WHEN = ['finalised', 'paid'] as const;
/** `finalised`: an invoice with status active or paid; `paid`: status paid only. */
export type SubmitWhen = (typeof SUBMIT_WHEN)[number];

/** Registration types that are one-stop-shop schemes (their default scheme is `oss`). */
const OSS_TYPES: ReadonlySet<string> = new Set(['one_stop_shop', 'import_one_stop_shop', 'mini_one_stop_shop']);

const Country = z
  .string()
  .refine((v) => ISO_COUNTRIES.has(v), { error: 'must be an ISO 3166-1 alpha-2 country code such as DE' });

/** A percentage with at most 2 decimals in [0, 100): "19.00", "7", "5.5". */
const Percentage = z
  .string()
  .regex(/^\d+(\.\d{1,2})?$/, { error: 'must be a percentage such as "19.00" (at most 2 decimals; 19 means 19%)' })
  .refine((v) => !DECIMAL_PATTERN.test(v) || new Money(v).lessThan(100), { error: 'must be below 100 (a percentage)' });

const Uuid = z.guid({ error: 'must be a UUID' });

const RegistrationInput = z.strictObject({
  /** The entity jurisdiction UUID, when known. Exactly one of this and `taxable_jurisdiction`. */
  entity_jurisdiction: Uuid.optional(),
  /** Resolved at start from the registrations list: the registration's taxable jurisdiction ISO code. */
  taxable_jurisdiction: z.string().trim().min(1).optional(),
  /** With `taxable_jurisdiction`. @defaultValue `one_stop_shop` for scheme oss, else `standard` */
  registration_type: RegistrationType.optional(),
  /** With `taxable_jurisdiction`: the entity, when several entities are registered there. */
  entity: Uuid.optional(),
  /** The VAT country: whose VAT a domestic registration covers; an OSS registration's member state of identification. @defaultValue `taxable_jurisdiction` */
  country: Country.optional(),
  /** @defaultValue `oss` for one-stop-shop registration types, else `domestic` */
  scheme: z.enum(VAT_SCHEMES).optional(),
  /** @defaultValue the global `reporting_period` */
  reporting_period: z.enum(REPORTING_PERIODS).optional(),
});

/** One VAT registration of the seller, normalised: `country` and `scheme` are always known. */
export interface VatRegistration {
  entity_jurisdiction?: string;
  taxable_jurisdiction?: string;
  registration_type?: RegistrationType;
  entity?: string;
  country: string;
  scheme: VatScheme;
  reporting_period?: ReportingPeriod;
}

export const VatRegistration = RegistrationInput.superRefine((r, ctx) => {
  if ((r.entity_jurisdiction === undefined) === (r.taxable_jurisdiction === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: ['entity_jurisdiction'],
      message: 'give exactly one of entity_jurisdiction (a UUID) and taxable_jurisdiction (an ISO code resolved from the registrations list)',
    });
  }
  if (r.entity_jurisdiction !== undefined && (r.registration_type !== undefined || r.entity !== undefined)) {
    ctx.addIssue({ code: 'custom', path: ['registration_type'], message: 'registration_type and entity only go with taxable_jurisdiction' });
  }
  const country = r.country ?? r.taxable_jurisdiction;
  if (country === undefined || !ISO_COUNTRIES.has(country)) {
    ctx.addIssue({
      code: 'custom',
      path: ['country'],
      message: 'name the VAT country this registration covers (an ISO 3166-1 alpha-2 code); it defaults to taxable_jurisdiction only when that is a country',
    });
  }
  const typeScheme = r.registration_type === undefined ? undefined : OSS_TYPES.has(r.registration_type) ? 'oss' : 'domestic';
  if (r.scheme !== undefined && typeScheme !== undefined && r.scheme !== typeScheme) {
    ctx.addIssue({ code: 'custom', path: ['scheme'], message: `scheme ${r.scheme} does not fit registration_type ${r.registration_type}` });
  }
  if ((r.scheme ?? typeScheme) === 'oss' && country !== undefined && !EU_MEMBERS.has(country)) {
    ctx.addIssue({ code: 'custom', path: ['country'], message: `an OSS registration is held in an EU member state; ${country} is not one` });
  }
}).transform((r): VatRegistration => {
  const scheme: VatScheme = r.scheme ?? (r.registration_type !== undefined && OSS_TYPES.has(r.registration_type) ? 'oss' : 'domestic');
  return {
    ...(r.entity_jurisdiction === undefined ? {} : { entity_jurisdiction: r.entity_jurisdiction.toLowerCase() }),
    ...(r.taxable_jurisdiction === undefined
      ? {}
      : {
          taxable_jurisdiction: r.taxable_jurisdiction,
          registration_type: r.registration_type ?? (scheme === 'oss' ? 'one_stop_shop' : 'standard'),
        }),
    ...(r.entity === undefined ? {} : { entity: r.entity.toLowerCase() }),
    country: (r.country ?? r.taxable_jurisdiction) as string,
    scheme,
    ...(r.reporting_period === undefined ? {} : { reporting_period: r.reporting_period }),
  };
});

/** Names of the transaction types taxsync picks from the service's list (matched case-insensitively). */
const TypeName = z.string().trim().min(1);

export const VatSettings = z
  .strictObject({
    /** The seller's VAT registrations. @defaultValue [] (VAT is off) */
    registrations: z.array(VatRegistration).default([]),
    /** Where the seller is established (ships from). Required once a registration is configured. */
    seller_country: Country.optional(),
    /** Reporting period of registrations that name none. @defaultValue `quarterly` */
    reporting_period: z.enum(REPORTING_PERIODS).default('quarterly'),
    /** Which invoices are submitted. @defaultValue `finalised` (status active or paid) */
    submit_when: z.enum(SUBMIT_WHEN).default('finalised'),
    /** `submit_when` per source (e.g. `{"shopify": "paid"}`). @defaultValue {} */
    submit_when_by_source: z.record(z.string(), z.enum(SUBMIT_WHEN)).default({}),
    /**
     * EU B2C sales to another member state: `destination` (the customer's VAT, under a domestic
     * registration there or the OSS) or `origin` (the seller's VAT: below the EU-wide €10,000
     * threshold). @defaultValue `destination`
     */
    distance_sales: z.enum(['destination', 'origin']).default('destination'),
    /** An invoice with several VAT rates: `split` into one submission per rate, or `reject` (dead letter). @defaultValue `split` */
    mixed_rates: z.enum(['split', 'reject']).default('split'),
    /**
     * An invoice increased after its VAT was filed: `manual` (a VAT_CORRECTION_REQUIRED dead letter
     * stating the difference) or `supplement` (the positive difference filed as a submission of its
     * own, `<number> (supplement 1)`). docs/decisions.md. @defaultValue `manual`
     */
    increases: z.enum(['manual', 'supplement']).default('manual'),
    invoice_number: z
      .strictObject({
        /** `number` (the document number, else the external id) or always `external_id`. @defaultValue `number` */
        from: z.enum(['number', 'external_id']).default('number'),
        /** Prefix per source, so two connectors' numbers never collide in one entity jurisdiction. @defaultValue {} */
        prefix_by_source: z.record(z.string(), z.string()).default({}),
      })
      .prefault({}),
    /** partner_name when the invoice names nobody (an anonymous consumer sale). @defaultValue unset (such an invoice is invalid) */
    partner_name_fallback: z.string().trim().min(1).max(255).optional(),
    /**
     * Known rates per VAT country: `reduced` rates classify a line as `reduced`; all of them are the
     * candidates when a rate is inferred from a charged tax amount. @defaultValue {}
     */
    rates: z
      .record(
        z.string(),
        z.strictObject({ standard: Percentage.optional(), reduced: z.array(Percentage).default([]) }),
      )
      .default({}),
    /** vat_rate_type rules for lines (docs/vat.md, "Rate types"). */
    rate_types: z
      .strictObject({
        /** SKU → rate type. @defaultValue {} */
        by_sku: z.record(z.string(), z.enum(VAT_RATE_TYPES)).default({}),
        /** The line's tax code → rate type. @defaultValue {} */
        by_tax_code: z.record(z.string(), z.enum(VAT_RATE_TYPES)).default({}),
        /** A domestic 0% line no rule classifies. @defaultValue `zero_rated` */
        zero_rate: z.enum(['zero_rated', 'exempt']).default('zero_rated'),
      })
      .prefault({}),
    /** The names looked up in the transaction types list. */
    transaction_types: z
      .strictObject({
        b2b: TypeName.default('B2B Sales'),
        b2c: TypeName.default('B2C Sales'),
        intra_eu: TypeName.default('Intra-EU Supplies'),
        /** Zero-rated exports; when the list has no such type, B2B / B2C Sales is used. @defaultValue `Exports` */
        export: TypeName.default('Exports'),
        import_services: TypeName.default('Import Services'),
      })
      .prefault({}),
    /** Rule 2 locally: the largest accepted |vat − net × vat_rate / 100|. @defaultValue "0.01" */
    tolerance: z
      .string()
      .regex(/^\d+(\.\d+)?$/, { error: 'must be a non-negative decimal string such as "0.01"' })
      .default('0.01'),
  })
  .superRefine((s, ctx) => {
    for (const code of Object.keys(s.rates)) {
      if (!ISO_COUNTRIES.has(code)) ctx.addIssue({ code: 'custom', path: ['rates', code], message: `${code} is not an ISO 3166-1 alpha-2 country code` });
    }
    if (s.registrations.length === 0) return;
    if (s.seller_country === undefined) {
      ctx.addIssue({ code: 'custom', path: ['seller_country'], message: 'is required once a registration is configured (where the seller ships from)' });
    }
    const seen = new Map<string, number>();
    s.registrations.forEach((r, i) => {
      const cover = r.scheme === 'oss' ? 'oss' : `domestic ${r.country}`;
      const first = seen.get(cover);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['registrations', i],
          message: `registrations[${first}] already covers ${r.scheme === 'oss' ? 'the OSS' : `domestic VAT in ${r.country}`}; each supply must have one registration`,
        });
      } else seen.set(cover, i);
    });
  });
export type VatSettings = z.infer<typeof VatSettings>;
export type VatSettingsInput = z.input<typeof VatSettings>;

export const DEFAULT_VAT_SETTINGS: VatSettings = VatSettings.parse({});

/** VAT is on once a registration is configured. */
export const vatEnabled = (settings: VatSettings): boolean => settings.registrations.length > 0;

/**
 * A stable name of a registration in the settings, for the lead's resolution map and for messages:
 * its UUID, else `DE/standard` (with `@entity` when one is named).
 */
export function registrationRef(r: VatRegistration): string {
  if (r.entity_jurisdiction !== undefined) return r.entity_jurisdiction;
  const base = `${r.taxable_jurisdiction ?? r.country}/${r.registration_type ?? 'standard'}`;
  return r.entity === undefined ? base : `${base}@${r.entity}`;
}

export type RegistrationMatch = { ok: true; entity_jurisdiction: string; registration: Registration } | { ok: false; reason: string };

/**
 * Finds a configured registration (given by taxable jurisdiction and type) in the service's
 * registrations list, which the caller fetched. Inactive registrations only match when nothing
 * active does (a closed one still files its past periods), and a status the document does not list
 * counts before `inactive` and `pending`; two equally good matches are ambiguous.
 */
export function matchRegistration(r: VatRegistration, list: readonly Registration[]): RegistrationMatch {
  if (r.entity_jurisdiction !== undefined) return { ok: false, reason: `${r.entity_jurisdiction} is configured by UUID: nothing to resolve` };
  const iso = (r.taxable_jurisdiction ?? '').toUpperCase();
  const candidates = list.filter(
    (x) =>
      (x.taxable_jurisdiction_detail?.iso ?? '').toUpperCase() === iso &&
      x.registration_type === r.registration_type &&
      x.entity_jurisdiction !== undefined &&
      (r.entity === undefined || x.entity_detail?.id?.toLowerCase() === r.entity),
  );
  // Active first; then a status the document does not list (a later version's `deregistration_pending`
  // is a registration still open), never taken for inactive; then any.
  const active = candidates.filter((x) => x.status === undefined || x.status === 'active');
  const unlisted = candidates.filter((x) => x.status !== undefined && !(REGISTRATION_STATUSES as readonly string[]).includes(x.status));
  const pool = active.length > 0 ? active : unlisted.length > 0 ? unlisted : candidates;
  const ejs = new Set(pool.map((x) => x.entity_jurisdiction));
  const ref = registrationRef(r);
  if (pool.length === 0 || ejs.size === 0) {
    return { ok: false, reason: `no registration ${ref} in the registrations list (create it, or configure its entity_jurisdiction UUID)` };
  }
  if (ejs.size > 1) {
    return { ok: false, reason: `registration ${ref} matches ${ejs.size} entity jurisdictions (${[...ejs].join(', ')}): name the entity, or configure the UUID` };
  }
  const found = pool[0] as Registration;
  return { ok: true, entity_jurisdiction: (found.entity_jurisdiction as string).toLowerCase(), registration: found };
}

/** Whether `name` (a country, `oss`, or a registration's reference) names the registration `r`. */
export function namesRegistration(name: string, r: VatRegistration): boolean {
  if (name.toLowerCase() === 'oss') return r.scheme === 'oss';
  return (r.scheme === 'domestic' && r.country === name) || registrationRef(r) === name || registrationRef(r) === name.toLowerCase();
}

/**
 * The VAT settings a connection's invoices are mapped with: its establishment country as the
 * seller's, only the registrations it sells under, and its invoice-number prefix for its source
 * (docs/connections.md, "VAT"). Without facts of its own: the settings as they are.
 */
export function vatSettingsFor(settings: VatSettings, source: string, facts: ConnectionVat | undefined): VatSettings {
  if (facts === undefined) return settings;
  const { establishmentCountry, registrations, invoiceNumberPrefix } = facts;
  return {
    ...settings,
    ...(establishmentCountry === undefined ? {} : { seller_country: establishmentCountry }),
    ...(registrations === undefined ? {} : { registrations: settings.registrations.filter((r) => registrations.some((name) => namesRegistration(name, r))) }),
    ...(invoiceNumberPrefix === undefined
      ? {}
      : { invoice_number: { ...settings.invoice_number, prefix_by_source: { ...settings.invoice_number.prefix_by_source, [source]: invoiceNumberPrefix } } }),
  };
}
