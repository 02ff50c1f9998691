import type { z } from 'zod';

/**
 * Where an answer differs from the contract (docs/decisions.md, "Reading answers"). Drift is
 * never an error: taxsync reads what it needs (the answer schemas) and reports the rest here, so
 * an operator sees a service changing before it matters.
 */
export type DriftKind = 'null' | 'unknown_enum' | 'extra' | 'missing' | 'wrong_type';

export interface Drift {
  /** A field path with `[]` for any array index and `*` for any map key: `items[].tax.total_tax`. */
  path: string;
  kind: DriftKind;
}

export interface DriftFinding extends Drift {
  /** The endpoint template, never a URL with ids: `PUT /v1/transactions/`. */
  endpoint: string;
}

/** Told of each drift of each answer (after the once-per-shape log); must not throw. */
export type DriftObserver = (finding: DriftFinding) => void;

/** Findings kept per answer: enough to show what changed, bounded however odd the body. */
export const MAX_FINDINGS_PER_ANSWER = 50;

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: readonly z.ZodType[];
  entries?: Record<string, string | number>;
  values?: readonly unknown[];
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

// A key the service added is shown by name when it looks like a field name; anything else could be
// data (an id, an email used as a key), which never reaches a log line or a metric label.
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const keyLabel = (key: string) => (FIELD_NAME.test(key) ? key : '(key)');

interface Core {
  schema: z.ZodType;
  def: Def;
  optional: boolean;
  nullable: boolean;
  /** For a plain leaf (no check, no format): the JavaScript type its values have. */
  plain?: 'string' | 'boolean' | 'number';
}

// Answers are compared with the same few schemas again and again: each node is unwrapped once.
const cores = new WeakMap<z.ZodType, Core>();

/** Unwraps optional, nullable, default, catch, pipe… to the schema that says what the value is. */
function core(schema: z.ZodType): Core {
  const cached = cores.get(schema);
  if (cached !== undefined) return cached;
  let optional = false;
  let nullable = false;
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (def.type === 'optional' || def.type === 'default' || def.type === 'prefault') {
      optional = true;
      current = def.innerType!;
    } else if (def.type === 'nullable') {
      nullable = true;
      current = def.innerType!;
    } else if (def.type === 'catch' || def.type === 'readonly' || def.type === 'nonoptional') {
      current = def.innerType!;
    } else if (def.type === 'pipe') {
      current = def.in!;
    } else if (def.type === 'lazy') {
      current = def.getter!();
    } else {
      break;
    }
  }
  const def = defOf(current) as Def & { checks?: unknown[]; format?: string };
  const unchecked = (def.checks === undefined || def.checks.length === 0) && def.format === undefined;
  const plain = unchecked && (def.type === 'string' || def.type === 'boolean' || def.type === 'number') ? def.type : undefined;
  const made: Core = { schema: current, def, optional, nullable, ...(plain ? { plain } : {}) };
  cores.set(schema, made);
  return made;
}

/** Whether `value` is the JavaScript kind `schema` expects (object, array, string…), before any check. */
function sameKind(schema: z.ZodType, value: unknown): boolean {
  const type = core(schema).def.type;
  if (type === 'object' || type === 'record') return isRecord(value);
  if (type === 'array') return Array.isArray(value);
  if (type === 'string' || type === 'enum' || type === 'template_literal') return typeof value === 'string';
  if (type === 'number' || type === 'int') return typeof value === 'number';
  if (type === 'boolean') return typeof value === 'boolean';
  return false;
}

/**
 * How `value` differs from the contract `schema`: nulls where the contract has none, enum values
 * it does not list, fields it does not document, documented required fields that are absent, and
 * values of the wrong type or format. Never throws; bounded by MAX_FINDINGS_PER_ANSWER.
 */
export function detectDrift(schema: z.ZodType, value: unknown): Drift[] {
  const found = new Map<string, Drift>();
  // The path as segments ('items', '[]', 'tax'), joined only for a finding: most nodes have none.
  const path: string[] = [];
  const add = (kind: DriftKind, last?: string) => {
    if (found.size >= MAX_FINDINGS_PER_ANSWER) return;
    let shown = '';
    for (const part of last === undefined ? path : [...path, last]) shown = part === '[]' ? `${shown}[]` : shown === '' ? part : `${shown}.${part}`;
    if (shown === '') shown = '(body)';
    found.set(`${shown}\0${kind}`, { path: shown, kind });
  };

  function walk(node: z.ZodType, input: unknown): void {
    if (found.size >= MAX_FINDINGS_PER_ANSWER) return;
    const { schema: inner, def, optional, nullable, plain } = core(node);
    if (def.type === 'any' || def.type === 'unknown') return;
    if (input === undefined) {
      if (!optional) add('missing');
      return;
    }
    if (input === null) {
      if (!nullable) add('null');
      return;
    }
    if (plain !== undefined) {
      if (typeof input !== plain || (plain === 'number' && !Number.isFinite(input))) add('wrong_type');
      return;
    }
    switch (def.type) {
      case 'object': {
        if (!isRecord(input)) return add('wrong_type');
        const shape = def.shape ?? {};
        for (const key in shape) {
          path.push(key);
          walk(shape[key]!, input[key]);
          path.pop();
        }
        const catchall = def.catchall === undefined ? undefined : defOf(def.catchall).type;
        if (catchall === 'unknown' || catchall === 'any') return;
        for (const key of Object.keys(input)) {
          if (Object.hasOwn(shape, key)) continue;
          if (catchall === undefined || catchall === 'never') {
            add('extra', keyLabel(key));
          } else {
            path.push('*');
            walk(def.catchall!, input[key]);
            path.pop();
          }
        }
        return;
      }
      case 'record': {
        if (!isRecord(input)) return add('wrong_type');
        path.push('*');
        for (const key in input) walk(def.valueType!, input[key]);
        path.pop();
        return;
      }
      case 'array': {
        if (!Array.isArray(input)) return add('wrong_type');
        path.push('[]');
        for (const item of input) walk(def.element!, item);
        path.pop();
        return;
      }
      case 'union': {
        const options = def.options ?? [];
        // The option the value parses under (its extra fields are still drift); else the first of
        // the same kind, whose findings say what differs.
        const chosen = options.find((o) => o.safeParse(input).success) ?? options.find((o) => sameKind(o, input));
        if (chosen === undefined) return add('wrong_type');
        return walk(chosen, input);
      }
      case 'enum': {
        if (typeof input !== 'string' && typeof input !== 'number') return add('wrong_type');
        if (!Object.values(def.entries ?? {}).includes(input)) add('unknown_enum');
        return;
      }
      case 'literal': {
        const values = def.values ?? [];
        if (!values.includes(input)) add(values.some((v) => typeof v === typeof input) ? 'unknown_enum' : 'wrong_type');
        return;
      }
      default:
        if (!inner.safeParse(input).success) add('wrong_type');
    }
  }

  try {
    walk(schema, value);
  } catch {
    // A schema shape this walker does not know: report what was found so far, never fail a call.
  }
  return [...found.values()];
}

export interface DriftLogger {
  warn(object: Record<string, unknown>, message: string): void;
}

/** Distinct drift shapes logged per process; past it, drift is still counted but no longer logged. */
export const MAX_LOGGED_SHAPES = 500;

/**
 * Logs each new drift shape (endpoint + path + kind) once per process at warn, with no value from
 * the answer (customer data never reaches logs), and tells `count` of every finding (metrics).
 */
export function createDriftReporter(options: { logger: DriftLogger; count?: DriftObserver; maxShapes?: number }): DriftObserver {
  const seen = new Set<string>();
  const max = options.maxShapes ?? MAX_LOGGED_SHAPES;
  let capped = false;
  return (finding) => {
    try {
      options.count?.(finding);
      const shape = `${finding.endpoint}\0${finding.path}\0${finding.kind}`;
      if (seen.has(shape)) return;
      if (seen.size >= max) {
        if (!capped) options.logger.warn({ shapes: max }, 'response drift: more shapes than are logged; still counted in taxsync_response_drift_total');
        capped = true;
        return;
      }
      seen.add(shape);
      options.logger.warn(
        { endpoint: finding.endpoint, path: finding.path, kind: finding.kind },
        `response drift: ${finding.endpoint} answered with ${describe(finding.kind)} at ${finding.path} (read anyway; logged once)`,
      );
    } catch {
      // Observing drift never fails a call.
    }
  };
}

function describe(kind: DriftKind): string {
  switch (kind) {
    case 'null':
      return 'null where the contract has a value';
    case 'unknown_enum':
      return 'a value the contract does not list';
    case 'extra':
      return 'a field the contract does not document';
    case 'missing':
      return 'a required field missing';
    case 'wrong_type':
      return 'a value of another type or format';
  }
}
