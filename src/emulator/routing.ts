import { ROUTES, type Method, type RouteName } from './contract/endpoints.js';
import type { Answer, RecordRef } from './answer.js';
import type { Authority, TokenClaims } from './auth.js';
import type { EmulatorClock } from './clock.js';
import type { EmulatorSettings } from './options.js';
import type { EmulatorState } from './state.js';
import type { Variety } from './variety/dice.js';

/** What a route handler sees of a request: parsed, framework-free. */
export interface EmuRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** The token's claims; undefined only on routes without auth. */
  claims: TokenClaims | undefined;
  /** `http://host:port` as the client addressed it, for absolute links. */
  origin: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface RouteSpec {
  /** Endpoint name for faults and the request log (contract/endpoints.ts names, plus a few of the emulator's). */
  endpoint: string;
  method: Method;
  /** A fastify path (`/v1/customers/:id`). */
  path: string;
  /** Bearer token required. @defaultValue true */
  auth?: boolean;
  /** The record the request is about, known before processing (for the request log). */
  record?: (req: EmuRequest) => RecordRef | undefined;
  handler: (req: EmuRequest) => Answer | Promise<Answer>;
}

export interface RouteContext {
  define(spec: RouteSpec): void;
  state: EmulatorState;
  settings: EmulatorSettings;
  clock: EmulatorClock;
  authority: Authority;
  variety: Variety;
}

/** The fastify path of an endpoint of the table: `{id}` → `:id`, `{module}` → the VAT module. */
export function routePath(name: RouteName, vatModule: string): string {
  return ROUTES[name].path.replace('{module}', vatModule).replace(/\{([a-z_]+)\}/g, ':$1');
}

/** Registers an endpoint of the table under its own name. */
export function defineEndpoint(
  ctx: RouteContext,
  name: RouteName,
  handler: RouteSpec['handler'],
  extra: Pick<RouteSpec, 'auth' | 'record'> = {},
): void {
  ctx.define({ endpoint: name, method: ROUTES[name].method, path: routePath(name, ctx.settings.vatModule), handler, ...extra });
}
