import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../observability/logger.js';
import type { WaitingList } from '../../processors/waiting.js';
import type { DeadLetterEntry } from '../../queue/dead-letter.js';
import { discardEntries, entriesById, replayEntries, selectEntries, type DlqDeps, type Selection } from '../../dead-letters/service.js';
import type { Connections } from '../../config/connections.js';
import { describeTally, isEmptyFilter, parseFilter, tally, type DlqFilter } from '../../dead-letters/filter.js';
import type { AdminAuth, Viewer } from './auth.js';
import { confirmView, discardResultView, entryView, FILTER_FIELDS, listView, replayResultView, type Action, type FilterFields } from './dead-letter-views.js';
import { waitingView } from './waiting-view.js';
import type { ReportsData } from '../../activity/reports-data.js';
import { reportsView } from './reports-view.js';
import { html, page, type Html } from './html.js';

export const PAGE_SIZE = 50;

export interface DeadLetterRouteDeps {
  auth: AdminAuth;
  /** The dead-letter tools, writing the audit log as `actor`; their `connections` say each entry's connection (the list's filter and column). */
  dlq: (actor: string) => DlqDeps;
  logger: Logger;
  viewerOf: (request: FastifyRequest) => Viewer;
  /** The records waiting for what they need, shown above the list. */
  waiting?: () => Promise<WaitingList>;
  /** Source silence, activity plots and tax variances, shown above everything. */
  reports?: () => Promise<ReportsData>;
}

function fieldsOf(params: URLSearchParams): FilterFields {
  const fields: FilterFields = {};
  for (const name of FILTER_FIELDS) {
    const value = params.get(name)?.trim();
    if (value) fields[name] = value;
  }
  return fields;
}

/**
 * The filter the fields describe; a bad value is a message for the page (the CLI's wording, without
 * its `--`). `connections`: the dead-letter tools' (the daemon's); unknown, a connection is matched
 * by the connector its entries name.
 */
function filterOf(fields: FilterFields, connections: Connections | undefined): { filter: DlqFilter } | { error: string } {
  try {
    return { filter: parseFilter({ ...fields, externalId: fields.external_id }, connections) };
  } catch (error) {
    return { error: (error as Error).message.replace(/--(\w)/g, '$1') };
  }
}

function searchOf(request: FastifyRequest): URLSearchParams {
  return new URLSearchParams(request.url.split('?')[1] ?? '');
}

const NO_SELECTION = 'Choose the entries: name them (id), filter the list, or ask for every entry (all=1). An empty selection never means all.';

/** The ids named, without blanks (a blank `id=` names nothing). */
function namedIds(params: URLSearchParams): string[] {
  return params
    .getAll('id')
    .map((id) => id.trim())
    .filter((id) => id !== '');
}

/**
 * The chosen entries: the ids named, else every entry the filter matches, else with `all=1` every
 * entry. Nothing chosen is an error: one malformed form must never act on the whole queue.
 */
async function chosen(deps: DlqDeps, params: URLSearchParams): Promise<{ entries: DeadLetterEntry[]; missing: string[]; selection: Selection; fields: FilterFields } | { error: string }> {
  const fields = fieldsOf(params);
  const parsed = filterOf(fields, deps.connections);
  if ('error' in parsed) return parsed;
  const ids = namedIds(params);
  if (ids.length === 0 && isEmptyFilter(parsed.filter) && params.get('all') !== '1') return { error: NO_SELECTION };
  if (ids.length > 0) {
    const { entries, missing } = await entriesById(deps, ids);
    // Confirmed from a filtered list: the audit log keeps the filter as well as the ids.
    return { entries, missing, fields, selection: Object.keys(fields).length > 0 ? { ids, filter: parsed.filter } : { ids } };
  }
  return { entries: await selectEntries(deps, parsed.filter), missing: [], fields, selection: { filter: parsed.filter } };
}

/** The reports section; like the waiting one, a failure to read it is said on the page. */
async function reportsSection(read: () => Promise<ReportsData>, logger: Logger): Promise<Html> {
  try {
    return reportsView(await read());
  } catch (error) {
    logger.warn({ err: error }, 'reports could not be read');
    return html`<p class="error">Source activity and tax variances could not be read just now.</p>`;
  }
}

/** The waiting section; a failure to read it is said on the page, never a failed page. */
async function waitingSection(read: () => Promise<WaitingList>, logger: Logger): Promise<Html> {
  try {
    return waitingView(await read());
  } catch (error) {
    logger.warn({ err: error }, 'waiting records could not be read');
    return html`<p class="error">The waiting records could not be read just now.</p>`;
  }
}

export function registerDeadLetterRoutes(scope: FastifyInstance, deps: DeadLetterRouteDeps): void {
  const send = (request: FastifyRequest, reply: FastifyReply, title: string, body: Html, status = 200) => {
    const viewer = deps.viewerOf(request);
    const csrf = deps.auth.csrfFor(viewer);
    const options = csrf === undefined ? { actor: viewer.actor } : { actor: viewer.actor, csrf };
    return reply.code(status).type('text/html; charset=utf-8').send(page(title, body, options));
  };

  scope.get('/', (_request, reply) => reply.redirect('/admin/dead-letters', 303));

  scope.get('/dead-letters', async (request, reply) => {
    const params = searchOf(request);
    const fields = fieldsOf(params);
    const dlq = deps.dlq(deps.viewerOf(request).actor);
    const connections = dlq.connections;
    const parsed = filterOf(fields, connections);
    if ('error' in parsed) return send(request, reply, 'Dead letters', listView({ fields, entries: [], total: 0, offset: 0, limit: PAGE_SIZE, summary: 'no entries shown', error: parsed.error }), 400);
    const offset = Math.max(0, Number.parseInt(params.get('offset') ?? '0', 10) || 0);
    // One scan gives the page and the tally of the whole selection.
    const all = await selectEntries(dlq, parsed.filter);
    const entries = all.slice(offset, offset + PAGE_SIZE);
    const list = listView({ fields, entries, total: all.length, offset, limit: PAGE_SIZE, summary: describeTally(tally(all)), ...(connections ? { connections } : {}) });
    const reports = deps.reports ? await reportsSection(deps.reports, deps.logger) : '';
    return send(request, reply, 'Dead letters', html`${reports}${deps.waiting ? await waitingSection(deps.waiting, deps.logger) : ''}${list}`);
  });

  scope.get<{ Params: { id: string } }>('/dead-letters/entries/:id', async (request, reply) => {
    const dlq = deps.dlq(deps.viewerOf(request).actor);
    const { entries } = await entriesById(dlq, [request.params.id]);
    const [entry] = entries;
    if (!entry) return send(request, reply, 'Not found', html`<p>No dead-letter entry ${request.params.id} (replayed or discarded already?).</p><p><a href="/admin/dead-letters">back</a></p>`, 404);
    return send(request, reply, 'Dead-letter entry', entryView(entry, dlq.connections));
  });

  for (const action of ['replay', 'discard'] as const satisfies readonly Action[]) {
    const title = action === 'replay' ? 'Replay' : 'Discard';

    // GET: what would be done, with the button that does it (the confirmation).
    scope.get(`/dead-letters/${action}`, async (request, reply) => {
      const viewer = deps.viewerOf(request);
      const params = searchOf(request);
      const picked = await chosen(deps.dlq(viewer.actor), params);
      if ('error' in picked) return send(request, reply, title, html`<p class="error">${picked.error}</p><p><a href="/admin/dead-letters">back</a></p>`, 400);
      const csrf = deps.auth.csrfFor(viewer);
      return send(request, reply, title, confirmView({ action, entries: picked.entries, missing: picked.missing, fields: picked.fields, ...(csrf === undefined ? {} : { csrf }) }));
    });

    // POST: do it, through the same functions as `taxsync dlq` (coalescing, ledger, audit log).
    scope.post(`/dead-letters/${action}`, async (request, reply) => {
      const viewer = deps.viewerOf(request);
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      if (!deps.auth.sameSitePost(request, viewer, form.get('csrf') ?? undefined)) {
        return send(request, reply, title, html`<p class="error">Refused: this form did not come from this site's own pages (or the session changed). Go back and try again.</p>`, 403);
      }
      // The confirmation names every entry it acts on: a POST acts on named ids only, never on a
      // filter or on all (a blank `id=` used to select the whole queue).
      if (namedIds(form).length === 0) return send(request, reply, title, html`<p class="error">Name the entries to ${action} (id): ${NO_SELECTION}</p>`, 400);
      const dlq = deps.dlq(viewer.actor);
      const picked = await chosen(dlq, form);
      if ('error' in picked) return send(request, reply, title, html`<p class="error">${picked.error}</p>`, 400);
      if (action === 'replay') {
        const summary = await replayEntries(dlq, picked.entries, { actor: viewer.actor, selection: picked.selection });
        deps.logger.info({ actor: viewer.actor, action, count: picked.entries.length, counts: summary.counts }, 'dead letters replayed from the admin page');
        return send(request, reply, 'Replayed', replayResultView(summary, picked.missing));
      }
      const discarded = await discardEntries(dlq, picked.entries, picked.selection);
      deps.logger.info({ actor: viewer.actor, action, count: discarded }, 'dead letters discarded from the admin page');
      return send(request, reply, 'Discarded', discardResultView(discarded, picked.missing));
    });
  }
}
