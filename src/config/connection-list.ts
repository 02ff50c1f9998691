import type { ConnectionKeys, ConnectionVat } from '../domain/connection.js';
import { deepFreeze } from '../domain/freeze.js';
import { Secret } from '../domain/secret.js';

/** One account on one platform, as the configuration resolved it (src/config/connections.ts; docs/connections.md). */
export interface Connection extends ConnectionKeys {
  readonly platform: string;
  /** Accepted webhook secrets, several during a rotation; none: its webhooks are off. */
  readonly webhookSecrets: readonly Secret[];
  /** The platform API's settings, as its connector's `platformApi` builds them (config.platforms' shape). */
  readonly api: unknown;
  /** The shop the platform names in its deliveries (the connector's shopHeader), normalised; undefined: not checked. */
  readonly shop?: string;
  readonly vat?: ConnectionVat;
  /** Declared in the connections file; false: a platform's default connection, from its variables. */
  readonly declared: boolean;
  /** The variables holding its webhook secrets, when named (never their values). */
  readonly secretVariables?: readonly string[];
  /** The printed development secret it takes under `taxsync start` on the emulator, when it has none (never with a real API). */
  readonly devSecret?: string;
}

/** A connection that takes webhooks or reads its platform: a default one of a platform nobody set up is neither. */
export function isActive(connection: Connection): boolean {
  return connection.declared || connection.webhookSecrets.length > 0 || hasApi(connection.api);
}

/** Whether a platform API's settings hold any credential (a Secret). */
function hasApi(api: unknown): boolean {
  return typeof api === 'object' && api !== null && Object.values(api).some((v) => v instanceof Secret);
}

export interface Connections {
  readonly list: readonly Connection[];
  get(id: string): Connection | undefined;
  /** The connection a record of `source` with `externalId` was written by: the longest prefix that fits. */
  ofRecord(source: string, externalId: string): Connection | undefined;
  /** Whether the record is connection `id`'s (ofRecord names it). */
  owns(id: string, source: string, externalId: string): boolean;
}

/** The lookups over a list of connections, frozen. */
export function connectionsOf(list: readonly Connection[]): Connections {
  const frozen = deepFreeze([...list], (value) => value instanceof Secret);
  const byId = new Map(frozen.map((c) => [c.id, c]));
  function ofRecord(source: string, externalId: string): Connection | undefined {
    let best: Connection | undefined;
    for (const c of frozen) {
      if (c.source !== source || !externalId.startsWith(c.externalIdPrefix)) continue;
      // The longest prefix; between equal ones (a platform's idle default and a declared one), the one in use.
      const longer = best === undefined || c.externalIdPrefix.length > best.externalIdPrefix.length;
      const same = best !== undefined && c.externalIdPrefix.length === best.externalIdPrefix.length;
      if (longer || (same && isActive(c) && !isActive(best!))) best = c;
    }
    return best;
  }
  return {
    list: frozen,
    get: (id) => byId.get(id),
    ofRecord,
    owns: (id, source, externalId) => ofRecord(source, externalId)?.id === id,
  };
}
