import type { RedisClient } from '../queue/connection.js';
import type { Settings } from '../config/settings.js';
import type { Connections } from '../config/connections.js';
import { parseCanonicalEvent } from '../domain/events.js';
import { applyMergePatch, jsonEqual } from '../domain/merge-patch.js';
import { DeadLetterEntry } from '../queue/dead-letter.js';
import { QUEUE_NAMES } from '../queue/names.js';
import { parseKeptDelivery, type DlqDeps } from './service.js';
import { describeIssues } from '../domain/field-errors.js';

/**
 * `taxsync dlq edit <id> --patch file.json`: a JSON merge patch (RFC 7396) applied to what an entry
 * would replay — a worker entry's event, or a kept delivery's body when it is JSON — validated
 * before it is saved. The first edit keeps the original (`event_original` / `raw_body_original`).
 * See docs/operations.md, "Editing an entry".
 */

export interface EditPlan {
  entry: DeadLetterEntry;
  /** What was patched. */
  target: 'event' | 'raw body';
  /** The paths the patch sets or removes (no values: they may be customer data). */
  paths: string[];
}

/** The dotted paths a merge patch touches, e.g. `data.address.city`. */
export function patchPaths(patch: unknown, prefix = ''): string[] {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return [prefix || '(whole)'];
  const out: string[] = [];
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) out.push(...patchPaths(value, path));
    else out.push(path);
  }
  return out;
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/** PURE apart from the connector parse: the edited entry, or an Error with a one-line reason. */
export function planEdit(entry: DeadLetterEntry, patch: unknown, options: { settings: Settings; connections?: Connections | undefined; actor: string; now: Date }): EditPlan {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw new Error('the patch must be a JSON object (RFC 7396 merge patch)');
  if (Object.keys(patch).length === 0) throw new Error('the patch is empty: nothing to change');
  const edited = { at: options.now.toISOString(), actor: options.actor, count: (entry.edited?.count ?? 0) + 1 };
  const paths = patchPaths(patch);

  if (entry.event !== null && entry.event !== undefined) {
    const original = entry.event;
    const patched = applyMergePatch(original, patch);
    for (const [name, why] of [
      ['id', 'it ties the edit to the dead-lettered version'],
      ['record', 'the record key (kind, source, external_id) is fixed; another record needs its own event'],
      ['occurred_at', "it orders the record's events (latest state wins)"],
    ] as const) {
      if (!jsonEqual(field(patched, name), field(original, name))) throw new Error(`refused: the patch changes the event's ${name}; ${why}`);
    }
    const parsed = parseCanonicalEvent(patched);
    if (!parsed.success) {
      const problems = describeIssues(parsed.error.issues, { whole: '(event)' });
      throw new Error(`refused: the edited event is not a valid canonical event: ${problems}`);
    }
    const next = DeadLetterEntry.parse({ ...entry, event: parsed.data, event_original: entry.event_original ?? original, edited });
    return { entry: next, target: 'event', paths };
  }

  if (entry.raw) {
    const raw = entry.raw;
    if (raw.body_truncated) throw new Error('refused: the body was cut when stored; an edit cannot restore it');
    let body: unknown;
    try {
      body = JSON.parse(raw.body);
    } catch {
      throw new Error('refused: the kept body is not JSON; only JSON bodies can be edited with a merge patch');
    }
    const nextBody = JSON.stringify(applyMergePatch(body, patch));
    const result = parseKeptDelivery({ ...raw, body: nextBody }, options.settings, options.connections);
    if (result.kind === 'invalid') throw new Error(`refused: the edited delivery still does not parse: ${result.message}`);
    if (result.kind === 'events' && (result.rejected?.length ?? 0) > 0) {
      throw new Error(`refused: the edited delivery still does not parse: ${result.rejected!.map((r) => r.message).join('; ')}`);
    }
    const next = DeadLetterEntry.parse({ ...entry, raw: { ...raw, body: nextBody }, raw_body_original: entry.raw_body_original ?? raw.body, edited });
    return { entry: next, target: 'raw body', paths };
  }

  throw new Error('refused: the entry keeps neither an event nor a delivery to edit');
}

/**
 * Applies `patch` to entry `id` and saves it with its audit line in ONE transaction, which fails
 * (and saves nothing) when the entry was replayed, discarded or edited by someone else meanwhile.
 */
export async function editEntry(deps: Pick<DlqDeps, 'queues' | 'deadLetters' | 'audit' | 'settings' | 'connections' | 'clock'>, id: string, patch: unknown, actor: string): Promise<EditPlan> {
  const queue = deps.queues[QUEUE_NAMES.deadLetter];
  const client = (await queue.backend.client) as unknown as RedisClient;
  const jobKey = queue.toKey(id);
  await client.watch(jobKey);
  try {
    const entry = await deps.deadLetters.get(id);
    if (!entry) throw new Error(`no dead-letter entry ${id}`);
    const plan = planEdit(entry, patch, { settings: deps.settings, connections: deps.connections, actor, now: (deps.clock ?? (() => new Date()))() });
    const multi = client.multi();
    multi.hset(jobKey, { data: JSON.stringify(plan.entry) });
    deps.audit.appendTo(multi, { action: 'edit', actor, ids: [id], count: 1, outcome: `edited ${plan.target} (${plan.paths.join(', ')}); edit ${plan.entry.edited?.count ?? 1}` });
    const results = await multi.exec();
    if (results === null) throw new Error(`entry ${id} changed while it was being edited (replayed, discarded or edited by someone else); nothing saved, try again`);
    for (const [error] of results) if (error) throw error;
    return plan;
  } finally {
    await client.unwatch();
  }
}
