import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseFor } from '../connectors/namespace.js';
import type { Connector, ConnectorSettings, ParseResult, WebhookRequest } from '../connectors/types.js';
import type { ConnectionKeys } from '../domain/connection.js';
import { isTaxsyncError } from '../domain/errors.js';
import { summariseFields } from '../domain/field-errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { NewDeadLetter } from '../queue/dead-letter.js';
import type { Producer } from '../queue/producer.js';
import { scanJson, withoutDeepElements, type ElementSpan, type JsonLimits, type JsonShape } from './json-shape.js';

/** A connection that takes webhooks: its platform's connector, the settings it verifies and reads with, and its keys. */
export interface EnabledConnector {
  connector: Connector;
  settings: ConnectorSettings;
  /** Its id, source and prefix (docs/connections.md), and the shop it is for when declared. */
  connection: ConnectionKeys & { readonly shop?: string | undefined };
}

export interface WebhookDeps {
  connectors: Readonly<Record<string, EnabledConnector>>;
  producer: Producer;
  logger: Logger;
  metrics: Metrics;
  bodyLimitBytes: number;
  rawBodyLimitBytes: number;
  /** Depth and batch-size limits checked on the raw bytes before parsing (TAXSYNC_WEBHOOK_MAX_DEPTH, TAXSYNC_WEBHOOK_MAX_BATCH). */
  limits?: JsonLimits;
  clock?: () => Date;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 64, maxBatch: 1000 };

/** One element of a batch that was not accepted, as the answer lists it. */
interface ElementError {
  index: number;
  message: string;
  fields?: Record<string, string[]>;
  dead_letter_id?: string;
}

function isJson(contentType: string | undefined): boolean {
  return contentType === 'application/json' || (contentType?.endsWith('+json') ?? false);
}

function tooDeepMessage(limits: JsonLimits, at: number): string {
  return `nested deeper than ${limits.maxDepth} levels at byte ${at}`;
}

/** `{"[1].data.name": [...]}` → per-element fields, for a batch refused whole (no element valid). */
function fieldsByElement(fields: Record<string, string[]> | undefined): Map<number, Record<string, string[]>> {
  const out = new Map<number, Record<string, string[]>>();
  for (const [key, messages] of Object.entries(fields ?? {})) {
    const match = /^\[(\d+)\]\.?(.*)$/.exec(key);
    if (!match) continue;
    const index = Number(match[1]);
    const element = out.get(index) ?? {};
    element[match[2] || '(event)'] = messages;
    out.set(index, element);
  }
  return out;
}

/** JSON text of a value that may still be too deep or cyclic to serialise: never throws. */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch (error) {
    return `(not serialisable: ${(error as Error).name})`;
  }
}

function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

function flatHeaders(headers: FastifyRequest['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(headers)) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/**
 * The shop a verified delivery names, against the one its connection declares: a delivery of
 * another shop signed with this connection's secret (two shops sharing a secret) is refused.
 */
function wrongShop(enabled: EnabledConnector, req: WebhookRequest): string | undefined {
  const { shop } = enabled.connection;
  const header = enabled.connector.shopHeader;
  if (shop === undefined || header === undefined) return undefined;
  const named = req.headers[header.name]?.trim();
  if (named === undefined || named === '') return `the delivery names no shop (${header.name}); connection "${enabled.connection.id}" takes only ${shop}`;
  const normalised = header.normalise(named);
  return normalised === shop ? undefined : `the delivery is from ${normalised} (${header.name}); connection "${enabled.connection.id}" takes only ${shop}`;
}

/**
 * POST /webhooks/:connection (a connection's id; a platform's name is its default connection).
 * Verification runs on the raw bytes before any parsing; a 202 is sent only after the events (or
 * the dead letter of an unreadable signed payload) are stored in Redis.
 */
export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookDeps): void {
  const clock = deps.clock ?? (() => new Date());

  // Every body reaches the handler as raw bytes: signatures are over the exact bytes sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes }, (_req, body, done) => done(null, body));

  // One child logger per connector, made once: a child per request is measurable CPU.
  const loggers = new Map<string, Logger>();
  const loggerFor = (id: string): Logger => {
    let log = loggers.get(id);
    if (!log) loggers.set(id, (log = deps.logger.child({ connector: id })));
    return log;
  };

  app.post<{ Params: { connector: string } }>('/webhooks/:connector', { bodyLimit: deps.bodyLimitBytes }, async (request, reply) => {
    const id = request.params.connector;
    const enabled = Object.hasOwn(deps.connectors, id) ? deps.connectors[id] : undefined;
    const count = (outcome: string) =>
      deps.metrics.webhooks.inc({ connector: enabled ? enabled.connector.id : 'unknown', connection: enabled ? id : 'unknown', outcome });
    if (!enabled) {
      count('not_found');
      return reply.code(404).send({ error: 'not_found', message: `no enabled connection "${id}"` });
    }
    const { connector, settings } = enabled;
    const log = loggerFor(id);
    const req: WebhookRequest = {
      headers: flatHeaders(request.headers),
      rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      contentType: mediaType(request.headers['content-type']),
      receivedAt: clock(),
    };

    if (req.contentType === undefined || !connector.contentTypes.includes(req.contentType)) {
      count('unsupported_media_type');
      return reply
        .code(415)
        .send({ error: 'unsupported_media_type', message: `content type must be one of ${connector.contentTypes.join(', ')}` });
    }
    if (connector.isPing?.(req)) {
      count('ping');
      return reply.code(200).send({ status: 'ping' });
    }
    const verified = connector.verify(req, settings);
    if (!verified.ok) {
      count('unauthorized');
      log.warn({ reason: verified.reason }, 'webhook rejected: signature');
      return reply.code(401).send({ error: 'unauthorized', message: 'signature verification failed' });
    }
    const shop = wrongShop(enabled, req);
    if (shop !== undefined) {
      count('wrong_shop');
      log.warn({ reason: shop }, 'webhook refused: another shop');
      return reply.code(403).send({ error: 'forbidden', message: shop });
    }

    const limits = deps.limits ?? DEFAULT_JSON_LIMITS;
    const shape = isJson(req.contentType) ? scanJson(req.rawBody, limits) : undefined;
    const deep = shape?.kind === 'batch' ? shape.elements.filter((e) => e.tooDeepAt !== undefined) : [];
    const refusal =
      shape?.kind === 'too-deep'
        ? { message: `the body is ${tooDeepMessage(limits, shape.at)}: flatten it`, where: { byte: shape.at } }
        : shape?.kind === 'too-many'
          ? { message: `the batch holds ${shape.count} events, at most ${limits.maxBatch} per delivery: split it`, where: { events: shape.count } }
          : shape?.kind === 'batch' && deep.length > 0 && !shape.balanced
            ? { message: `event [${deep[0]!.index}] is ${tooDeepMessage(limits, deep[0]!.tooDeepAt!)} and the body is not valid JSON`, where: { byte: deep[0]!.tooDeepAt!, index: deep[0]!.index } }
            : undefined;
    if (refusal) {
      // Refused before parsing, with where: the sender can fix it; a 5xx would only be retried for ever.
      count('bad_request');
      log.warn({ where: refusal.where }, 'webhook refused: over the structure limits');
      return reply.code(400).send({ error: 'bad_request', ...refusal });
    }

    let result: ParseResult;
    try {
      // Elements nesting too deep are blanked (null) so the connector never holds them; their
      // errors are set below, by index.
      result = parseFor(connector, enabled.connection, deep.length > 0 ? { ...req, rawBody: withoutDeepElements(req.rawBody, deep) } : req, settings);
    } catch (error) {
      // A connector bug must not lose a signed payload: it is kept like any unreadable one.
      log.error({ err: error }, 'connector parse threw');
      result = { kind: 'invalid', message: `connector failed to read the payload: ${error instanceof Error ? error.message : String(error)}` };
    }

    try {
      return await handleParsed(result, req, shape, deep, limits, enabled, reply, count, log);
    } catch (error) {
      count('unavailable');
      log.error({ err: error, code: isTaxsyncError(error) ? error.code : undefined }, 'webhook not stored');
      return reply
        .code(503)
        .header('retry-after', '5')
        .send({ error: 'unavailable', message: 'could not store the delivery; retry later' });
    }
  });

  async function handleParsed(
    result: ParseResult,
    req: WebhookRequest,
    shape: JsonShape | undefined,
    deep: readonly ElementSpan[],
    limits: JsonLimits,
    { connector, connection }: EnabledConnector,
    reply: FastifyReply,
    count: (outcome: string) => void,
    log: Logger,
  ) {
    const deliveryId = 'deliveryId' in result ? result.deliveryId : undefined;
    // Delivery ids are the platform's, per shop: deduplicated per connection.
    if (deliveryId !== undefined && (await deps.producer.isDuplicateDelivery(connection.id, deliveryId))) {
      count('duplicate');
      return reply.code(200).send({ status: 'duplicate' });
    }
    const delivery = deliveryId === undefined ? undefined : { connector: connection.id, id: deliveryId };

    if (result.kind === 'ignored') {
      count('ignored');
      log.debug({ topic: result.topic, reason: result.reason }, 'webhook ignored');
      return reply.code(200).send({ status: 'ignored', reason: result.reason });
    }

    const spans = shape?.kind === 'batch' ? shape.elements : [];
    const deepAt = new Map(deep.map((e) => [e.index, e.tooDeepAt!]));
    const deepFields = (index: number) => ({ '(event)': [tooDeepMessage(limits, deepAt.get(index)!)] });

    if (result.kind === 'invalid') {
      // A batch none of whose events is valid is kept whole; the answer still names each element.
      const perElement = fieldsByElement(result.fields);
      for (const index of deepAt.keys()) perElement.set(index, deepFields(index));
      const elements: ElementError[] = [...perElement.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, fields]) => ({ index, message: `event [${index}]: ${summariseFields(fields, 5)}`, fields }));
      const fields = deep.length === 0 ? result.fields : { ...result.fields, ...Object.fromEntries(deep.map((e) => [`[${e.index}].(event)`, deepFields(e.index)['(event)']])) };
      const entry = deadLetterFor(req, connection.id, result.topic, deliveryId, result.message, fields);
      const stored = await deps.producer.accept({ events: [], deadLetters: [entry], delivery });
      count('invalid');
      const id = stored.deadLetters[0]?.id;
      log.warn({ topic: result.topic, deadLetterId: id, fields: Object.keys(fields ?? {}) }, 'signed payload dead-lettered');
      return reply.code(202).send({
        status: 'accepted',
        accepted: 0,
        dead_lettered: 1,
        ...(id === undefined ? {} : { dead_letter_id: id }),
        ...(elements.length > 0 ? { rejected: elements } : {}),
      });
    }

    const parts = (result.rejected ?? []).map((part) => {
      const tooDeep = deepAt.has(part.index);
      const fields = tooDeep ? deepFields(part.index) : part.fields;
      const message = tooDeep ? tooDeepMessage(limits, deepAt.get(part.index)!) : part.message;
      // The element as it was sent (its bytes), never re-serialised: that is what failed before.
      const span = spans[part.index];
      const text = span ? req.rawBody.subarray(span.start, span.end).toString('utf8') : safeJson(part.raw);
      return { index: part.index, message: `event [${part.index}]: ${message}`, fields, text };
    });
    const rejected = parts.map((part) => deadLetterFor(req, connection.id, result.topic, deliveryId, part.message, part.fields, part.text));
    const stored = await deps.producer.accept({ events: result.events, deadLetters: rejected, delivery });
    const tally = { queued: 0, stale: 0, duplicate: 0 };
    for (const outcome of stored.outcomes) tally[outcome] += 1;
    const labels = { connector: connector.id, connection: connection.id };
    for (const [outcome, n] of Object.entries(tally)) if (n > 0) deps.metrics.events.inc({ ...labels, outcome }, n);
    if (rejected.length > 0) deps.metrics.events.inc({ ...labels, outcome: 'rejected' }, rejected.length);
    count('accepted');
    if (result.triggeredAt) {
      const ageSeconds = Math.round((req.receivedAt.getTime() - result.triggeredAt.getTime()) / 1000);
      if (ageSeconds > 60) log.info({ topic: result.topic, ageSeconds }, 'late delivery (platform retry)');
    }
    return reply.code(202).send({
      status: 'accepted',
      accepted: result.events.length,
      ...tally,
      dead_lettered: rejected.length,
      ...(parts.length > 0
        ? {
            rejected: parts.map(
              (part, i): ElementError => ({
                index: part.index,
                message: part.message,
                ...(part.fields ? { fields: part.fields } : {}),
                ...(stored.deadLetters[i] ? { dead_letter_id: stored.deadLetters[i].id } : {}),
              }),
            ),
          }
        : {}),
    });
  }

  function deadLetterFor(
    req: WebhookRequest,
    connectorId: string,
    topic: string | undefined,
    deliveryId: string | undefined,
    message: string,
    fields: Record<string, string[]> | undefined,
    partText?: string,
  ): NewDeadLetter {
    const text = partText ?? req.rawBody.toString('utf8');
    const limit = deps.rawBodyLimitBytes;
    const at = req.receivedAt.toISOString();
    return {
      queue: 'ingest',
      record: null,
      event: null,
      error: { code: 'INVALID_PAYLOAD', message, retryable: false, ...(fields ? { fields } : {}) },
      http: null,
      raw: {
        connector: connectorId,
        ...(topic === undefined ? {} : { topic }),
        ...(deliveryId === undefined ? {} : { delivery_id: deliveryId }),
        ...(req.contentType === undefined ? {} : { content_type: req.contentType }),
        received_at: at,
        body: text.length > limit ? text.slice(0, limit) : text,
        body_truncated: text.length > limit,
      },
      attempts: 0,
      first_failed_at: at,
      last_failed_at: at,
    };
  }
}
