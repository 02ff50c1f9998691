import type { z } from 'zod';
import type { Secret } from '../domain/secret.js';
import type { CanonicalEvent } from '../domain/events.js';

/** A webhook delivery as it arrived: the raw bytes, before any parsing. */
export interface WebhookRequest {
  /** Header names lowercased; repeated headers joined with ", ". */
  headers: Readonly<Record<string, string | undefined>>;
  rawBody: Buffer;
  /** The media type without parameters, lowercased ("application/json"). */
  contentType: string | undefined;
  receivedAt: Date;
}

/** What a connector needs from configuration; passed in, never read from the environment. */
export interface ConnectorSettings {
  /** The `source` every record of this connector carries (DESIGN.md invariant 3). */
  source: string;
  /** Accepted secrets, several during a rotation. */
  secrets: readonly Secret[];
  /** Allowed clock skew for signed timestamps, in seconds (default 300). */
  toleranceSeconds: number;
  /**
   * The connection the delivery came to (docs/connections.md), when not the platform's default:
   * the ERP accepts it as its events' `connector` besides `erp`. @defaultValue the platform's id
   */
  connection?: string;
}

export type VerifyResult = { ok: true } | { ok: false; reason: string };

/** The outcome of reading a verified delivery. Parsing never throws. */
export type ParseResult =
  | {
      kind: 'events';
      topic: string;
      /** Key for delivery dedupe: the same delivery retried has the same id. */
      deliveryId: string;
      events: CanonicalEvent[];
      /** When the platform first tried this delivery (Shopify retries for hours with the original payload). */
      triggeredAt?: Date;
      /**
       * Parts of a multi-event delivery (an ERP batch) that failed their schema: each becomes a
       * dead-letter entry while the valid events are queued.
       */
      rejected?: { index: number; message: string; fields?: Record<string, string[]>; raw: unknown }[];
    }
  | { kind: 'ignored'; topic: string; reason: string; deliveryId?: string }
  | {
      kind: 'invalid';
      topic?: string;
      deliveryId?: string;
      message: string;
      /** Field errors in the `{field: [messages]}` shape, naming what failed. */
      fields?: Record<string, string[]>;
    };

/** One sample delivery of `taxsync demo`, before signing: the signature headers are added when it is sent. */
export interface DemoSample {
  /** Topic or event type, for messages. */
  topic: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A record the demo expects in the tax engine once the daemon has synced the connector's samples. */
export type DemoExpected =
  | { record: 'customer' | 'invoice'; external_id: string }
  | { record: 'refund'; external_id: string; invoice_external_id: string }
  | { record: 'exemption'; external_id: string; customer_external_id: string; certificate_id: string };

/**
 * What a connector gives `taxsync demo`: shaped like its fixtures but trimmed to what taxsync reads.
 * Every record id carries the run id, so a second run creates new records instead of being
 * deduplicated, and every timestamp is taken from `now`, so signatures and stale checks pass.
 */
export interface ConnectorDemo {
  deliveries: DemoSample[];
  expected: DemoExpected[];
  /**
   * Later states of records the first deliveries created, sent once the first state went through
   * (so each is an update of what the services already hold, not coalesced with it).
   */
  updates?: { delivery: DemoSample; record: 'invoice'; external_id: string; /** What changed, for people. */ change: string }[];
}

/**
 * A connector is data plus small functions (STYLE.md habit 8). `verify` runs on the raw bytes
 * before any parsing and in constant time; `parse` runs only on verified deliveries. The reason
 * of a failed verification never contains a signature or a secret.
 */
/**
 * What a connector declares to the configuration, in its own pure `config.ts` (zod and src/domain
 * only, so src/config reads it without a cycle): src/config/load.ts reads these variables for
 * every connector of the registry and names no platform itself.
 */
export interface ConnectorConfig {
  /** The route (`/webhooks/<id>`), the key of config.webhookSecrets and of settings' `sources`. */
  readonly id: string;
  /** The variable holding its webhook secret (comma-separated during a rotation): SHOPIFY_WEBHOOK_SECRET. */
  readonly secretVariable: string;
  /**
   * The fixed, printed webhook secret of the zero-configuration start (never used with a real API).
   * Without one the connector stays off until its secret is configured.
   */
  readonly devSecret?: string;
  /**
   * The platform's own API (`taxsync backfill`, the fetch of a waiting refund's original): a zod
   * object of its environment variables, transformed into the settings its client reads
   * (`config.platforms.<id>`). Each variable is documented in docs/configuration.md. A variable
   * named `…_URL` is where the credentials go: src/config holds it to the https rule of the
   * services' URLs (plain http only for loopback or with TAXSYNC_ALLOW_INSECURE_HTTP=1).
   * @defaultValue none: the platform's API is not read
   */
  readonly platformApi?: PlatformApiSchema;
  /**
   * The shapes of the external ids this platform gives (docs/connections.md, "Prefixes"):
   * `canBegin(text)` says whether one of them can begin with `text`. Two connections of one source
   * whose prefixes differ by such a text could write the same key, so the configuration refuses them.
   * @defaultValue any text (the ids are chosen by the seller: every prefix must be apart)
   */
  readonly externalIds?: { readonly described: string; canBegin(text: string): boolean };
  /**
   * The header in which the platform names the shop a delivery comes from (Shopify
   * `x-shopify-shop-domain`, WooCommerce `x-wc-webhook-source`), and how a value is compared. A
   * connection that declares its `shop` refuses a delivery naming another.
   * @defaultValue none: the platform names no shop
   */
  readonly shopHeader?: { readonly name: string; readonly example: string; normalise(value: string): string };
}

/**
 * Whether one of the ids made of `literals` followed by digits (with `-` between groups where the
 * shape has it) can begin with `text`: the platforms whose ids are numbers (`1001`,
 * `refund-1001-2`, `guest-order-1001`).
 */
export function numberedIdsCanBegin(literals: readonly string[], text: string): boolean {
  return literals.some((literal) => (text.length <= literal.length ? literal.startsWith(text) : text.startsWith(literal) && /^\d+(-\d*)?$|^$/.test(text.slice(literal.length))));
}

/** A connector's platform-API variables (`.in.shape` names them) and what they become. */
export type PlatformApiSchema = z.ZodPipe<z.ZodObject, z.ZodTransform>;

export function defineConnectorConfig<const C extends ConnectorConfig>(config: C): C {
  return config;
}

export interface Connector extends ConnectorConfig {
  /** The `source` used when settings name none: the connector id, `api` for the ERP. */
  readonly defaultSource: string;
  /** Whether the signature covers a timestamp that verify holds to the tolerance (Stripe, ERP). */
  readonly signsTimestamp: boolean;
  /** Media types accepted on the route (anything else is a 415). */
  readonly contentTypes: readonly string[];
  /** Unsigned deliveries that get 200 and nothing else (WooCommerce's creation ping). */
  isPing?(req: WebhookRequest): boolean;
  verify(req: WebhookRequest, settings: ConnectorSettings): VerifyResult;
  parse(req: WebhookRequest, settings: ConnectorSettings): ParseResult;
  /** Headers that make `rawBody` a correctly signed delivery: for tests, fixtures and `taxsync demo`. */
  sign(rawBody: Buffer, secret: string, now: Date): Record<string, string>;
  /**
   * The headers `parse` reads, rebuilt from what a dead-letter entry kept (topic, delivery id), so
   * `dlq replay --remap` reads the delivery again. Signatures are not needed: it was verified when
   * received. @defaultValue no headers
   */
  replayHeaders?(kept: { topic?: string | undefined; deliveryId?: string | undefined }): Record<string, string | undefined>;
  /**
   * The sample deliveries of `taxsync demo` for one run (`run`: 1 to 12 digits), in `<id>/demo.ts`.
   * @defaultValue none: the demo leaves the connector out
   */
  demo?(options: { run: string; now: Date }): ConnectorDemo;
}

export function defineConnector<C extends Connector>(connector: C): C {
  return connector;
}
