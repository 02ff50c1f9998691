import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Connector, ConnectorSettings, ParseResult, WebhookRequest } from '../connectors/types.js';
import { isTaxsyncError } from '../domain/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { NewDeadLetter } from '../queue/dead-letter.js';
import type { Producer } from '../queue/producer.js';

export interface EnabledConnector {
  connector: Connector;
  settings: ConnectorSettings;
}

export interface WebhookDeps {
  connectors: Readonly<Record<string, EnabledConnector>>;
  producer: Producer;
  logger: Logger;
  metrics: Metrics;
  bodyLimitBytes: number;
  rawBodyLimitBytes: number;
  clock?: () => Date;
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
 * POST /webhooks/:connector. Verification runs on the raw bytes before any parsing; a 202 is sent
 * only after the events (or the dead letter of an unreadable signed payload) are stored in Redis.
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
    const count = (outcome: string) => deps.metrics.webhooks.inc({ connector: enabled ? id : 'unknown', outcome });
    if (!enabled) {
      count('not_found');
      return reply.code(404).send({ error: 'not_found', message: `no enabled connector "${id}"` });
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

    let result: ParseResult;
    try {
      result = connector.parse(req, settings);
    } catch (error) {
      // A connector bug must not lose a signed payload: it is kept like any unreadable one.
      log.error({ err: error }, 'connector parse threw');
      result = { kind: 'invalid', message: `connector failed to read the payload: ${error instanceof Error ? error.message : String(error)}` };
    }

    try {
      return await handleParsed(result, req, enabled, reply, count, log);
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
    { connector }: EnabledConnector,
    reply: FastifyReply,
    count: (outcome: string) => void,
    log: Logger,
  ) {
    const deliveryId = 'deliveryId' in result ? result.deliveryId : undefined;
    if (deliveryId !== undefined && (await deps.producer.isDuplicateDelivery(connector.id, deliveryId))) {
      count('duplicate');
      return reply.code(200).send({ status: 'duplicate' });
    }
    const delivery = deliveryId === undefined ? undefined : { connector: connector.id, id: deliveryId };

    if (result.kind === 'ignored') {
      count('ignored');
      log.debug({ topic: result.topic, reason: result.reason }, 'webhook ignored');
      return reply.code(200).send({ status: 'ignored', reason: result.reason });
    }

    if (result.kind === 'invalid') {
      const entry = deadLetterFor(req, connector.id, result.topic, deliveryId, result.message, result.fields);
      const stored = await deps.producer.accept({ events: [], deadLetters: [entry], delivery });
      count('invalid');
      log.warn({ topic: result.topic, deadLetterId: stored.deadLetters[0]?.id, fields: Object.keys(result.fields ?? {}) }, 'signed payload dead-lettered');
      return reply.code(202).send({ status: 'accepted', accepted: 0, dead_lettered: 1 });
    }

    const rejected = (result.rejected ?? []).map((part) =>
      deadLetterFor(req, connector.id, result.topic, deliveryId, `event ${part.index}: ${part.message}`, part.fields, part.raw),
    );
    const stored = await deps.producer.accept({ events: result.events, deadLetters: rejected, delivery });
    const tally = { queued: 0, stale: 0, duplicate: 0 };
    for (const outcome of stored.outcomes) tally[outcome] += 1;
    for (const [outcome, n] of Object.entries(tally)) if (n > 0) deps.metrics.events.inc({ connector: connector.id, outcome }, n);
    if (rejected.length > 0) deps.metrics.events.inc({ connector: connector.id, outcome: 'rejected' }, rejected.length);
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
    });
  }

  function deadLetterFor(
    req: WebhookRequest,
    connectorId: string,
    topic: string | undefined,
    deliveryId: string | undefined,
    message: string,
    fields: Record<string, string[]> | undefined,
    part?: unknown,
  ): NewDeadLetter {
    const text = part === undefined ? req.rawBody.toString('utf8') : JSON.stringify(part);
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
