import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { FILING_STATUS_VALUES } from './contract/vat-requests.js';
import { issuesToFields } from './answer.js';
import { isoNow } from './clock.js';
import { FaultRule } from './faults.js';
import { VARIETY_MODES } from './variety/dice.js';
import type { Emulator } from './emulator.js';
import { forceFilingStatus } from './vat/filings.js';

/**
 * The control API under `/__emulator/`, for tests and manual trials: request log, faults, forced
 * token expiry, extra clients, the clock, filing statuses, reset. Off unless the emulator is
 * built with `control: true` (CLI: `--control`); it has no auth, so keep the emulator on loopback.
 */

const FaultsBody = z.strictObject({ seed: z.number().int().optional(), rules: z.array(FaultRule.loose()) });
const ClientBody = z.strictObject({
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  permissions: z.array(z.string()).optional(),
});
const ClockBody = z.union([z.strictObject({ now: z.iso.datetime({ offset: true }) }), z.strictObject({ advance_ms: z.number().int() })]);
const StatusBody = z.strictObject({ status: z.enum(FILING_STATUS_VALUES) });
const VarietyBody = z.strictObject({ mode: z.enum(VARIETY_MODES), seed: z.number().int().optional() });

function parseOr400<S extends z.ZodType>(schema: S, body: unknown, reply: FastifyReply): z.infer<S> | undefined {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  void reply.code(400).send({ error: 'invalid control request', details: issuesToFields(parsed.error.issues) });
  return undefined;
}

export function registerControlRoutes(app: FastifyInstance, emulator: Emulator): void {
  const config = { emulatorControl: true };
  const { state, faults, authority, requestLog, clock, settings, variety } = emulator;

  app.get('/__emulator/', { config }, () => ({
    emulator: 'taxsync',
    sources: settings.sources,
    vat_module: settings.vatModule,
    token_ttl_s: settings.tokenTtlSeconds,
    clients: [...settings.clients.map((c) => c.clientId)],
    now: isoNow(clock),
    counts: {
      customers: state.customers.live().length,
      exemptions: state.exemptions.live().length,
      transactions: state.transactions.live().length,
      vat_transactions: state.vatTransactions.live().length,
      registrations: state.registrations.live().length,
      filings: state.filings.live().length,
    },
    faults: { seed: faults.seed(), rules: faults.list() },
    variety: { mode: variety.mode(), seed: variety.seed() },
  }));

  app.get('/__emulator/variety', { config }, () => ({ mode: variety.mode(), seed: variety.seed() }));

  app.put('/__emulator/variety', { config }, (request, reply) => {
    const body = parseOr400(VarietyBody, request.body, reply);
    if (body === undefined) return reply;
    variety.set(body.mode, body.seed);
    return { mode: variety.mode(), seed: variety.seed() };
  });

  app.get('/__emulator/requests', { config }, (request) => {
    const query = request.query as Record<string, string | undefined>;
    const since = query.since_id === undefined ? 0 : Number(query.since_id);
    return {
      requests: requestLog
        .entries()
        .filter(
          (e) =>
            e.id > since &&
            (query.endpoint === undefined || e.endpoint === query.endpoint) &&
            (query.record_key === undefined || e.record?.key === query.record_key),
        ),
    };
  });

  app.delete('/__emulator/requests', { config }, (_request, reply) => {
    requestLog.clear();
    return reply.code(204).send();
  });

  app.post('/__emulator/reset', { config }, (_request, reply) => {
    emulator.reset();
    return reply.code(204).send();
  });

  app.get('/__emulator/faults', { config }, () => ({ seed: faults.seed(), rules: faults.list() }));

  app.put('/__emulator/faults', { config }, (request, reply) => {
    const body = parseOr400(FaultsBody, request.body, reply);
    if (body === undefined) return reply;
    const rules = z.array(FaultRule).safeParse(body.rules);
    if (!rules.success) return reply.code(400).send({ error: 'invalid fault rule', details: issuesToFields(rules.error.issues) });
    faults.set(rules.data, body.seed);
    return { seed: faults.seed(), rules: faults.list() };
  });

  app.post('/__emulator/faults', { config }, (request, reply) => {
    const rule = parseOr400(FaultRule, request.body, reply);
    if (rule === undefined) return reply;
    faults.add(rule);
    return reply.code(201).send({ seed: faults.seed(), rules: faults.list() });
  });

  app.delete('/__emulator/faults', { config }, (_request, reply) => {
    faults.clear();
    return reply.code(204).send();
  });

  app.post('/__emulator/tokens/expire', { config }, () => ({ expired: authority.expireAll() }));

  app.post('/__emulator/clients', { config }, (request, reply) => {
    const body = parseOr400(ClientBody, request.body, reply);
    if (body === undefined) return reply;
    authority.addClient({ clientId: body.client_id, clientSecret: body.client_secret, ...(body.permissions ? { permissions: body.permissions } : {}) });
    return reply.code(201).send({ client_id: body.client_id, permissions: body.permissions ?? 'default' });
  });

  app.put('/__emulator/clock', { config }, (request, reply) => {
    const body = parseOr400(ClockBody, request.body, reply);
    if (body === undefined) return reply;
    if ('now' in body) clock.set(Date.parse(body.now));
    else clock.advance(body.advance_ms);
    return { now: isoNow(clock) };
  });

  app.delete('/__emulator/clock', { config }, () => {
    clock.reset();
    return { now: isoNow(clock) };
  });

  app.post('/__emulator/filings/:id/status', { config }, (request, reply) => {
    const body = parseOr400(StatusBody, request.body, reply);
    if (body === undefined) return reply;
    const filing = forceFilingStatus(state, (request.params as { id: string }).id, body.status, isoNow(clock));
    if (filing === undefined) return reply.code(404).send({ detail: 'Not found.' });
    return { id: filing.id, status: filing.status };
  });
}
