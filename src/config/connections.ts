import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { MAX_EXTERNAL_ID_PREFIX, type ConnectionVat } from '../domain/connection.js';
import { TaxsyncError } from '../domain/errors.js';
import { describeIssues } from '../domain/field-errors.js';
import { Secret } from '../domain/secret.js';
import { ISO_COUNTRIES } from '../domain/reference/countries.js';
import { CONNECTOR_LIST } from '../connectors/registry.js';
import type { ConnectorConfig } from '../connectors/types.js';
import type { Config } from './load.js';
import type { Settings } from './settings.js';
import { connectionCollisions, connectionVatProblems } from './connection-rules.js';
import { connectionsOf, type Connection, type Connections } from './connection-list.js';

export { connectionsOf, isActive, type Connection, type Connections } from './connection-list.js';

/**
 * The connections of an installation (docs/connections.md): the JSON file named by
 * TAXSYNC_CONNECTIONS, and one default connection per platform made from the per-platform
 * variables (id = the platform's name, no prefix), as before connections existed. Read once at
 * boot; every problem is reported in one CONFIG_INVALID error that names the connection and the
 * field and never holds a secret.
 */

const ConnectionId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, { error: 'must be 1 to 63 lowercase letters, digits, - or _, starting with a letter or digit (it is part of the webhook URL)' });
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be the name of an environment variable' });
const Prefix = z
  .string()
  .max(MAX_EXTERNAL_ID_PREFIX, { error: `must be at most ${MAX_EXTERNAL_ID_PREFIX} characters` })
  .regex(/^[A-Za-z0-9._~-]*$/, { error: 'may hold only letters, digits and . _ ~ - (it becomes part of every external id)' });

const ConnectionInput = z.strictObject({
  id: ConnectionId,
  platform: z.string().min(1, { error: 'must name a platform' }),
  source: z.string().regex(/^[a-z][a-z0-9_]*$/, { error: 'must be a lowercase source identifier' }).optional(),
  external_id_prefix: Prefix.default(''),
  shop: z.string().trim().min(1).optional(),
  webhook_secrets: z.array(z.string().min(1, { error: 'must not be empty' })).optional(),
  webhook_secrets_env: z.array(EnvName).optional(),
  api: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  vat: z
    .strictObject({
      establishment_country: z.string().refine((v) => ISO_COUNTRIES.has(v), { error: 'must be an ISO 3166-1 alpha-2 country code such as FR' }).optional(),
      registrations: z.array(z.string().trim().min(1)).min(1, { error: 'must name at least one registration (leave it out for all of them)' }).optional(),
      invoice_number_prefix: z.string().max(MAX_EXTERNAL_ID_PREFIX, { error: `must be at most ${MAX_EXTERNAL_ID_PREFIX} characters` }).optional(),
    })
    .optional(),
});
type ConnectionInput = z.infer<typeof ConnectionInput>;

const ConnectionsFile = z.strictObject({ connections: z.array(z.unknown(), { error: 'must be a list of connections: {"connections": [ … ]}' }) });

/** `connections[i] "id"` for messages; never a value of the connection. */
function where(index: number, raw: unknown): string {
  const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id.length <= 63 ? `connections[${index}] "${id}"` : `connections[${index}]`;
}

function readFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new TaxsyncError('CONFIG_INVALID', `TAXSYNC_CONNECTIONS: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TaxsyncError('CONFIG_INVALID', `TAXSYNC_CONNECTIONS: ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

/** A value given as itself or as the name of the variable holding it: `<name>` or `<name>_env`. */
function resolveValue(api: Record<string, string | number>, name: string, env: Record<string, string | undefined>, at: string, problems: string[]): string | undefined {
  const direct = api[name];
  const variable = api[`${name}_env`];
  if (direct !== undefined && variable !== undefined) problems.push(`${at}: api.${name} and api.${name}_env are both given: give one`);
  if (variable !== undefined) {
    const value = env[String(variable)];
    if (value === undefined || value.trim() === '') problems.push(`${at}: api.${name}_env names ${String(variable)}, which is not set`);
    return value;
  }
  return direct === undefined ? undefined : String(direct);
}

/** The platform API settings of a declared connection, through its connector's own variables' schema. */
function apiOf(connector: ConnectorConfig, input: ConnectionInput, env: Record<string, string | undefined>, at: string, problems: string[]): unknown {
  const schema = connector.platformApi;
  const given = input.api ?? {};
  if (schema === undefined) {
    if (input.api !== undefined) problems.push(`${at}: api: the ${connector.id} platform has no API taxsync reads`);
    return undefined;
  }
  const variables = Object.keys(schema.in.shape);
  const platformPrefix = `${connector.id.toUpperCase()}_`;
  const fieldOf = (variable: string) => variable.slice(platformPrefix.length).toLowerCase();
  const known = new Set(variables.flatMap((v) => [fieldOf(v), `${fieldOf(v)}_env`]));
  for (const key of Object.keys(given)) if (!known.has(key)) problems.push(`${at}: api.${key} is not a field of ${connector.id} (${[...variables.map(fieldOf)].join(', ')}, each also as <field>_env)`);
  const synthetic = Object.fromEntries(variables.map((v) => [v, resolveValue(given, fieldOf(v), env, at, problems)]));
  const parsed = schema.safeParse(synthetic);
  if (parsed.success) return parsed.data;
  // The variable's name in an issue's path becomes the connection's field name.
  for (const issue of parsed.error.issues) problems.push(`${at}: api.${fieldOf(String(issue.path[0] ?? ''))} ${issue.message}`);
  return undefined;
}

function secretsOf(input: ConnectionInput, env: Record<string, string | undefined>, at: string, problems: string[]): Secret[] {
  if (input.webhook_secrets !== undefined && input.webhook_secrets_env !== undefined) problems.push(`${at}: webhook_secrets and webhook_secrets_env are both given: give one (the docs recommend webhook_secrets_env)`);
  if (input.webhook_secrets !== undefined) return input.webhook_secrets.map((s) => new Secret(s));
  const out: Secret[] = [];
  for (const name of input.webhook_secrets_env ?? []) {
    const value = env[name];
    if (value === undefined || value.trim() === '') problems.push(`${at}: webhook_secrets_env names ${name}, which is not set`);
    // A variable may hold several, comma-separated, as the per-platform variables do.
    else out.push(...value.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => new Secret(s)));
  }
  return out;
}

function declared(raw: unknown, index: number, ctx: Resolve): Connection | undefined {
  const at = where(index, raw);
  const parsed = ConnectionInput.safeParse(raw);
  if (!parsed.success) {
    ctx.problems.push(`${at}: ${describeIssues(parsed.error.issues, { whole: '(connection)', sentence: true })}`);
    return undefined;
  }
  const input = parsed.data;
  const connector = ctx.connectors.find((c) => c.id === input.platform);
  if (connector === undefined) {
    ctx.problems.push(`${at}: platform "${input.platform}" is not one taxsync knows (${ctx.connectors.map((c) => c.id).join(', ')})`);
    return undefined;
  }
  const clash = ctx.connectors.find((c) => c.id === input.id && c.id !== input.platform);
  if (clash) ctx.problems.push(`${at}: the id "${input.id}" is the name of the ${clash.id} platform, whose default connection it is: give this ${input.platform} connection another id`);
  if (input.shop !== undefined && connector.shopHeader === undefined) ctx.problems.push(`${at}: shop: the ${connector.id} platform does not name the shop in its deliveries`);
  const source = input.source ?? ctx.settings.sources[connector.id] ?? ctx.defaultSource(connector.id);
  if (!ctx.settings.allowed_sources.includes(source)) ctx.problems.push(`${at}: source "${source}" is not one of the allowed sources (${ctx.settings.allowed_sources.join(', ')})`);
  const api = apiOf(connector, input, ctx.env, at, ctx.problems);
  const vat = input.vat === undefined ? undefined : { establishmentCountry: input.vat.establishment_country, registrations: input.vat.registrations, invoiceNumberPrefix: input.vat.invoice_number_prefix };
  return {
    id: input.id,
    platform: connector.id,
    source,
    externalIdPrefix: input.external_id_prefix,
    webhookSecrets: secretsOf(input, ctx.env, at, ctx.problems),
    api,
    ...(input.shop === undefined || connector.shopHeader === undefined ? {} : { shop: connector.shopHeader.normalise(input.shop) }),
    ...(vat === undefined ? {} : { vat: JSON.parse(JSON.stringify(vat)) as ConnectionVat }),
    declared: true,
    ...(input.webhook_secrets_env === undefined ? {} : { secretVariables: input.webhook_secrets_env }),
  };
}

interface Resolve {
  env: Record<string, string | undefined>;
  settings: Settings;
  connectors: readonly (ConnectorConfig & { defaultSource?: string })[];
  defaultSource(platform: string): string;
  problems: string[];
}

/**
 * The installation's connections. `connectors`: the registry's, and in a test its own platform
 * too. `defaultSources`: each platform's source when settings name none (the connector's).
 */
export function loadConnections(
  config: Pick<Config, 'connectionsFile' | 'webhookSecrets' | 'platforms'>,
  settings: Settings,
  env: Record<string, string | undefined> = process.env,
  connectors: readonly (ConnectorConfig & { defaultSource?: string })[] = CONNECTOR_LIST,
): Connections {
  const ctx: Resolve = { env, settings, connectors, problems: [], defaultSource: (platform) => connectors.find((c) => c.id === platform)?.defaultSource ?? platform };
  const list: Connection[] = [];
  if (config.connectionsFile !== undefined) {
    const file = ConnectionsFile.safeParse(readFile(config.connectionsFile));
    if (!file.success) throw connectionsError([`TAXSYNC_CONNECTIONS file ${config.connectionsFile}: ${describeIssues(file.error.issues, { whole: '(file)', sentence: true })}`]);
    file.data.connections.forEach((raw, i) => {
      const connection = declared(raw, i, ctx);
      if (connection === undefined) return;
      if (list.some((c) => c.id === connection.id)) ctx.problems.push(`${where(i, raw)}: the id "${connection.id}" is declared twice`);
      else list.push(connection);
    });
  }
  const platforms = config.platforms as Readonly<Record<string, unknown>>;
  for (const connector of connectors) {
    const secrets = config.webhookSecrets[connector.id] ?? [];
    const own = list.find((c) => c.id === connector.id);
    if (own !== undefined) {
      // The file's connection of that name takes nothing from the platform's variables it does not name.
      if (secrets.length > 0 && !(own.secretVariables ?? []).includes(connector.secretVariable)) {
        ctx.problems.push(`${connector.secretVariable} is set, but the connections file declares the connection "${connector.id}": name it there (webhook_secrets_env: ["${connector.secretVariable}"]) or unset it`);
      }
      continue;
    }
    list.push({
      id: connector.id,
      platform: connector.id,
      source: settings.sources[connector.id] ?? ctx.defaultSource(connector.id),
      externalIdPrefix: '',
      webhookSecrets: secrets,
      api: platforms[connector.id],
      declared: false,
      ...(connector.devSecret === undefined ? {} : { devSecret: connector.devSecret }),
    });
  }
  ctx.problems.push(...connectionCollisions(list, connectors), ...connectionVatProblems(list, settings.vat));
  if (ctx.problems.length > 0) throw connectionsError(ctx.problems);
  return connectionsOf(list);
}

function connectionsError(problems: string[]): TaxsyncError {
  return new TaxsyncError('CONFIG_INVALID', `invalid connections: ${problems.join('; ')}`, { details: { problems } });
}

