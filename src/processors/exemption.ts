import type { TaxClient } from '../api/index.js';
import { ExemptionRequest, type Exemption } from '../api/schemas/index.js';
import { ExemptionData, type CanonicalEvent } from '../domain/events.js';
import type { RecordKey } from '../domain/record-key.js';
import { mapExemption, mapExemptionCancelled, type MappingSettings } from '../mapping/index.js';
import type { RecordStore } from '../queue/record-state.js';
import { accepted, acceptedOutcome, deleted, found, notSent } from './outcome.js';
import { sentHash, unchanged } from './sent-hash.js';
import type { HandlerContext, HandlerOutcome, RecordHandler } from './types.js';

/**
 * Exemptions have no external key in the tax engine: taxsync keeps the engine's id in the record's
 * state. A create whose answer was lost (timeout, reset, crash) must not create a second
 * exemption, so a `create_pending` mark holding the body is set before POST, and while it is set
 * the exemptions are searched for exactly that body before creating again. Every field must match:
 * a looser match could take over another record's exemption of the same customer.
 */
export function createExemptionHandler(deps: { tax: TaxClient; records: RecordStore; settings: MappingSettings }): RecordHandler {
  /** The latest exemption (the list is in creation order) that holds what `sent` asked for. */
  async function findCreated(sent: ExemptionRequest): Promise<string | undefined> {
    let match: string | undefined;
    // The list has no customer filter: page through it.
    for await (const exemption of deps.tax.exemptions.iterate({ limit: 100 })) {
      if (sameExemption(exemption, sent)) match = exemption.id;
    }
    return match;
  }

  /** `id`: the exemption to update, already found (a create whose answer was lost). */
  async function write(body: ExemptionRequest, ctx: HandlerContext, id?: string): Promise<HandlerOutcome> {
    const hash = sentHash(body);
    // Only with its id known: without it, the exemption may have to be found or created again.
    const skip = ctx.state.taxId === undefined ? undefined : unchanged(ctx, hash, 'exemption');
    if (skip) return skip;
    await ctx.sending();
    return { ...(await send(body, ctx, id)), sentHash: hash };
  }

  /**
   * The exemption an earlier create of this record made although its answer was lost (the
   * pending-create mark is set, taxsync never learned the id): found by the body that create sent
   * (`fallback`, the body about to be sent, for the bare mark older versions wrote).
   */
  async function lostCreate(ctx: HandlerContext, fallback?: ExemptionRequest): Promise<{ id: string; body: ExemptionRequest } | undefined> {
    if (ctx.state.taxId !== undefined || ctx.state.createPending === undefined) return undefined;
    const body = pendingBody(ctx.state.createPending) ?? fallback;
    if (body === undefined) return undefined;
    const id = await findCreated(body);
    if (id === undefined) return undefined;
    await ctx.trace({ step: 'answered', detail: `found exemption ${id} from an earlier create whose answer was lost` });
    return { id, body };
  }

  async function send(body: ExemptionRequest, ctx: HandlerContext, knownId?: string): Promise<Extract<HandlerOutcome, { kind: 'done' }>> {
    const id = knownId ?? ctx.state.taxId ?? (await lostCreate(ctx, body))?.id;
    if (id !== undefined) {
      const existing = id;
      // An update answered 2xx without a readable id is still this exemption, updated.
      const updated = await found(() => accepted(() => deps.tax.exemptions.update(existing, body), () => Promise.resolve(existing)));
      if (updated?.kind === 'read') return { kind: 'done', detail: `exemption ${updated.record.id} updated`, taxId: updated.record.id };
      if (updated) return acceptedOutcome('exemption update', updated, 'so the id it was sent to is kept');
      // Deleted in the tax engine meanwhile: create it again below.
    }
    await deps.records.setFields(ctx.record, { create_pending: JSON.stringify(body), tax_id: null });
    // A create answered 2xx without a readable id: found by its body like a lost answer; when it
    // cannot be, the pending-create mark stays and the next write looks for it before creating.
    const created = await accepted(() => deps.tax.exemptions.create(body), () => findCreated(body));
    if (created.kind === 'unreadable') return acceptedOutcome('exemption', created, 'so it was found by its body among the exemptions');
    return { kind: 'done', detail: `exemption ${created.record.id} created`, taxId: created.record.id };
  }

  async function customerId(data: Pick<ExemptionData, 'customer_external_id'>, ctx: HandlerContext): Promise<string | undefined> {
    const customer = await found(() => deps.tax.customers.getByKey(ctx.record.source, data.customer_external_id));
    return customer?.id;
  }

  return async (event, ctx) => {
    const key = ctx.record;
    switch (event.type) {
      case 'exemption.upserted': {
        const id = await customerId(event.data, ctx);
        const mapped = mapExemption(event.data, { key, settings: deps.settings, ...(id ? { customerId: id } : {}) });
        if (mapped.kind === 'send') return write(mapped.body, ctx);
        return waitingFor(notSent(mapped), id === undefined ? customerKey(event.data, ctx) : undefined);
      }
      case 'exemption.cancelled': {
        const previous = previousExemption(ctx.state.appliedEvent);
        // Kept whole, so a later cancellation or a replay of this one still has the exemption;
        // without a previous version the copy stays (nothing held, or a create found by its body).
        ctx.keep(previous ? { ...event, data: { ...previous, status: 'cancelled' } } : null);
        if (previous === undefined) {
          // No version was ever marked applied, yet a create may have reached the engine (its
          // answer lost, the worker killed before the mark): that exemption is the one to cancel.
          const lost = await lostCreate(ctx);
          if (lost) return write({ ...lost.body, exemption_status: 'cancelled' }, ctx, lost.id);
        }
        const customer = previous ? await customerId(previous, ctx) : undefined;
        const mapped = mapExemptionCancelled(event.data, {
          key,
          settings: deps.settings,
          ...(previous ? { previous } : {}),
          ...(customer ? { customerId: customer } : {}),
        });
        if (mapped.kind === 'send') return write(mapped.body, ctx);
        return waitingFor(notSent(mapped), previous && customer === undefined ? customerKey(previous, ctx) : undefined);
      }
      case 'exemption.deleted': {
        // Also an exemption whose create reached the engine although its answer was lost.
        const id = ctx.state.taxId ?? (await lostCreate(ctx))?.id;
        if (id === undefined) return { kind: 'done', detail: 'nothing sent: this exemption was never created in the tax engine' };
        await ctx.sending({ keepCopy: true });
        return { ...(await deleted(() => deps.tax.exemptions.delete(id), `exemption ${id}`)), sentHash: null };
      }
      default:
        return { kind: 'done', detail: `nothing sent: ${event.type} is not an exemption event` };
    }
  };
}

/** The exemption of the record's applied copy: an upsert, or a cancellation kept whole. */
function previousExemption(event: CanonicalEvent | undefined): ExemptionData | undefined {
  if (event?.type === 'exemption.upserted') return event.data;
  if (event?.type !== 'exemption.cancelled') return undefined;
  const whole = ExemptionData.safeParse(event.data);
  return whole.success ? whole.data : undefined;
}

/** The exemption's customer, as a record key of its connector's source. */
function customerKey(data: Pick<ExemptionData, 'customer_external_id'>, ctx: HandlerContext): RecordKey {
  return { kind: 'customer', source: ctx.record.source, external_id: data.customer_external_id };
}

/** A wait for the customer names it, so the waiting record is listed with what it waits for. */
function waitingFor(outcome: HandlerOutcome, customer: RecordKey | undefined): HandlerOutcome {
  return outcome.kind === 'wait' && customer !== undefined ? { ...outcome, missing: { record: customer, what: 'customer' } } : outcome;
}

/** The body a pending create sent; undefined for the bare mark older versions wrote. */
function pendingBody(mark: string): ExemptionRequest | undefined {
  try {
    const parsed = ExemptionRequest.safeParse(JSON.parse(mark));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the engine's exemption holds every field `sent` set (with the engine's defaults for the rest). */
function sameExemption(exemption: Exemption, sent: ExemptionRequest): boolean {
  return (
    exemption.customer_id === sent.customer_id &&
    exemption.country === sent.country &&
    exemption.start_date === sent.start_date &&
    (exemption.end_date ?? null) === (sent.end_date ?? null) &&
    exemption.exemption_type === sent.exemption_type &&
    (exemption.exemption_status ?? 'active') === (sent.exemption_status ?? 'active') &&
    exemption.certificate_id === sent.certificate_id &&
    JSON.stringify(exemption.jurisdictions ?? []) === JSON.stringify(sent.jurisdictions ?? [])
  );
}
