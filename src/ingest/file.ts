import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { mapErpBody } from '../connectors/erp/map.js';
import type { CanonicalEvent } from '../domain/events.js';
import type { NewDeadLetter } from '../queue/dead-letter.js';
import type { Keys } from '../queue/keys.js';
import type { EventOutcome, Producer } from '../queue/producer.js';

export interface IngestSummary {
  lines: number;
  /** Lines skipped because an earlier run already committed them. */
  resumedAfter: number;
  blank: number;
  queued: number;
  duplicate: number;
  stale: number;
  /** Lines that failed the schema: kept as INVALID_PAYLOAD dead letters. */
  invalid: number;
}

export interface IngestOptions {
  file: string;
  producer: Producer;
  keys: Keys;
  /** The ERP connector's source: every event must carry it (or omit it). */
  source: string;
  batchSize?: number;
  /** Ignore the checkpoint of an earlier run and read the whole file again. */
  restart?: boolean;
  redis: { get(key: string): Promise<string | null> };
  onProgress?: (done: number, total: number | undefined) => void;
  clock?: () => Date;
}

const CHECKPOINT_TTL_MS = 30 * 86_400_000;

/** The file's identity for its checkpoint: path, size and modification time. */
function fileIdentity(path: string): { id: string; size: number } {
  const stat = statSync(path);
  const id = createHash('sha256').update(`${resolve(path)}\0${stat.size}\0${stat.mtimeMs}`).digest('hex').slice(0, 24);
  return { id, size: stat.size };
}

/**
 * Backfills canonical events from a JSON-lines file, one event per line, with the ERP
 * connector's rules. Safe to run again after an interruption: every batch commits together with
 * its checkpoint, and events are idempotent by id anyway (a repeat is counted as a duplicate).
 */
export async function ingestFile(options: IngestOptions): Promise<IngestSummary> {
  const clock = options.clock ?? (() => new Date());
  const batchSize = options.batchSize ?? 500;
  const { id: fileId, size } = fileIdentity(options.file);
  const checkpointKey = options.keys.ingestCheckpoint(fileId);
  const resumeAfter = options.restart ? 0 : Number((await options.redis.get(checkpointKey)) ?? '0');
  const summary: IngestSummary = { lines: 0, resumedAfter: resumeAfter, blank: 0, queued: 0, duplicate: 0, stale: 0, invalid: 0 };

  let events: CanonicalEvent[] = [];
  let deadLetters: NewDeadLetter[] = [];
  let bytes = 0;

  async function flush(lineNumber: number): Promise<void> {
    if (events.length === 0 && deadLetters.length === 0) return;
    const result = await options.producer.accept({
      events,
      deadLetters,
      checkpoint: { key: checkpointKey, value: String(lineNumber), ttlMs: CHECKPOINT_TTL_MS },
    });
    for (const outcome of result.outcomes) summary[outcome satisfies EventOutcome] += 1;
    summary.invalid += deadLetters.length;
    events = [];
    deadLetters = [];
    options.onProgress?.(bytes, size);
  }

  const lines = createInterface({ input: createReadStream(options.file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    summary.lines += 1;
    bytes += Buffer.byteLength(line) + 1;
    if (summary.lines <= resumeAfter) continue;
    if (line.trim() === '') {
      summary.blank += 1;
      continue;
    }
    const parsed = parseLine(line);
    // One event per line: an object, never a batch (so a line number names exactly one event).
    const mapped = parsed.ok && isObject(parsed.value) ? mapErpBody(parsed.value, { source: options.source }) : undefined;
    if (mapped?.kind === 'events' && mapped.events.length === 1) {
      events.push(mapped.events[0]!);
    } else {
      const message = !parsed.ok ? parsed.message : mapped?.kind === 'invalid' ? mapped.message : 'a line must hold one event (a JSON object)';
      const fields = mapped?.kind === 'invalid' ? mapped.fields : undefined;
      deadLetters.push(invalidLine(options.file, summary.lines, line, message, fields, clock()));
    }
    if (events.length + deadLetters.length >= batchSize) await flush(summary.lines);
  }
  await flush(summary.lines);
  return summary;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseLine(line: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(line) as unknown };
  } catch (error) {
    return { ok: false, message: `not valid JSON: ${(error as Error).message}` };
  }
}

function invalidLine(
  file: string,
  lineNumber: number,
  line: string,
  message: string,
  fields: Record<string, string[]> | undefined,
  now: Date,
): NewDeadLetter {
  const at = now.toISOString();
  // A stable id per line content: running the file again does not add the entry twice.
  const id = `ingest-${createHash('sha256').update(`${lineNumber}\0${line}`).digest('hex').slice(0, 32)}`;
  return {
    id,
    queue: 'ingest',
    record: null,
    event: null,
    error: { code: 'INVALID_PAYLOAD', message: `line ${lineNumber}: ${message}`, retryable: false, ...(fields ? { fields } : {}) },
    http: null,
    raw: {
      connector: 'ingest',
      topic: `${file}:${lineNumber}`,
      received_at: at,
      body: line.slice(0, 65_536),
      body_truncated: line.length > 65_536,
    },
    attempts: 0,
    first_failed_at: at,
    last_failed_at: at,
  };
}
