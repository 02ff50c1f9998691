import type { FastifyBaseLogger } from 'fastify';
import { DEFAULT_SOURCES } from './contract/endpoints.js';
import type { RegistrationKind } from './contract/vat-requests.js';
import { DEFAULT_CLIENT, type EmulatorClient } from './auth.js';
import type { FaultRuleInput } from './faults.js';
import { DEFAULT_TAX_TABLE, type TaxTable } from './tax-engine/tax-table.js';
import { VARIETY_MODES, type VarietyMode } from './variety/dice.js';
import { DEFAULT_REGISTRATION_COMBINATIONS } from './vat/reference-data.js';

/** Everything the emulator can be told; every field has a default (`DEFAULTS` below). */
export interface EmulatorOptions {
  /** Accepted client credentials. @defaultValue one client, `taxsync-dev` / `taxsync-dev-secret`, all permissions */
  clients?: readonly EmulatorClient[];
  /** Token lifetime in seconds (fractions allowed for tests). @defaultValue 86400 (24 h, as the spec says) */
  tokenTtlSeconds?: number;
  /** HS256 key for the tokens. @defaultValue random per instance */
  signingKey?: string;
  /** Accepted `source` values. @defaultValue `api` plus the nine assumed platforms (DESIGN.md, Sources) */
  sources?: readonly string[];
  /** Module segment of the VAT submission and type paths. @defaultValue `vat` */
  vatModule?: string;
  /** `tenant_id` of transactions and tokens. @defaultValue a fixed UUID */
  tenantId?: string;
  /** @defaultValue the table in tax-engine/tax-table.ts */
  taxTable?: TaxTable;
  /** Taxable jurisdiction (ISO code) → the registration types it accepts. @defaultValue vat/reference-data.ts */
  registrationCombinations?: Readonly<Record<string, readonly RegistrationKind[]>>;
  /** Entity names for entity_detail; other entity ids are accepted and named after their id. */
  entities?: readonly { id: string; name: string }[];
  /** VAT rule 2: |vat − net × rate / 100| up to this is a warning, above it an error. @defaultValue "0.05" */
  vatTolerance?: string;
  /** Registration list page size when `page_size` is not sent. @defaultValue 20 (maximum 100) */
  registrationPageSize?: number;
  /** Serve the control API under `/__emulator/`. @defaultValue false */
  control?: boolean;
  /** Fault rules active from the start (faults.ts). @defaultValue none */
  faults?: readonly FaultRuleInput[];
  /**
   * How much answers vary (docs/emulator.md, "Variety"): `varied` draws per record which legitimate
   * variations its answers carry, `strict` answers canonically, `max` applies every variation.
   * @defaultValue 'varied'
   */
  variety?: VarietyMode;
  /** Seed of the per-record draws of `varied`. @defaultValue 1 */
  varietySeed?: number;
  /** Seed of the fault randomness. @defaultValue 1 */
  seed?: number;
  /** Requests kept in the request log. @defaultValue 1000 */
  requestLogLimit?: number;
  /** Base of the business clock (clock.ts). @defaultValue Date.now */
  clock?: () => number;
  /** A pino logger for fastify's request logging. @defaultValue none (silent) */
  logger?: FastifyBaseLogger;
}

export const DEFAULT_TENANT_ID = '7a3c1e2d-5b4f-4c6a-9e8d-0f1a2b3c4d5e';

export type EmulatorSettings = Required<Omit<EmulatorOptions, 'signingKey' | 'logger' | 'clock'>> &
  Pick<EmulatorOptions, 'signingKey' | 'logger' | 'clock'>;

export function resolveOptions(options: EmulatorOptions = {}): EmulatorSettings {
  const settings: EmulatorSettings = {
    clients: options.clients ?? [DEFAULT_CLIENT],
    tokenTtlSeconds: options.tokenTtlSeconds ?? 86_400,
    signingKey: options.signingKey,
    sources: options.sources ?? DEFAULT_SOURCES,
    vatModule: options.vatModule ?? 'vat',
    tenantId: options.tenantId ?? DEFAULT_TENANT_ID,
    taxTable: options.taxTable ?? DEFAULT_TAX_TABLE,
    registrationCombinations: options.registrationCombinations ?? DEFAULT_REGISTRATION_COMBINATIONS,
    entities: options.entities ?? [],
    vatTolerance: options.vatTolerance ?? '0.05',
    registrationPageSize: options.registrationPageSize ?? 20,
    control: options.control ?? false,
    faults: options.faults ?? [],
    seed: options.seed ?? 1,
    variety: options.variety ?? 'varied',
    varietySeed: options.varietySeed ?? 1,
    requestLogLimit: options.requestLogLimit ?? 1000,
    clock: options.clock,
    logger: options.logger,
  };
  if (!VARIETY_MODES.includes(settings.variety)) throw new Error(`emulator: variety must be one of ${VARIETY_MODES.join(', ')}`);
  if (!(settings.tokenTtlSeconds > 0)) throw new Error('emulator: tokenTtlSeconds must be positive');
  if (!/^[a-z0-9-]+$/.test(settings.vatModule)) throw new Error('emulator: vatModule must be one lowercase path segment');
  if (!Number.isInteger(settings.registrationPageSize) || settings.registrationPageSize < 1 || settings.registrationPageSize > 100) {
    throw new Error('emulator: registrationPageSize must be an integer from 1 to 100');
  }
  return settings;
}
