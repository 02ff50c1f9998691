/**
 * A bounded scan of a JSON body's raw bytes, run before anything parses it: how deep it nests and,
 * for a top-level array (an ERP batch), where each element starts and ends. Deep nesting is what
 * made one element of a batch take its whole delivery down (a RangeError while storing it, so a
 * 503 the ERP retried for ever); the scan finds it with a counter, never recursion, and never
 * builds the structure.
 *
 * It does not validate JSON: a syntax error is left to the parser (and so to the connector, which
 * keeps a signed unreadable body as a dead letter). It only tracks strings (so brackets inside
 * them do not count) and brackets.
 */

export interface JsonLimits {
  /** Deepest nesting of objects and arrays allowed in one event (a batch element counts from itself). */
  maxDepth: number;
  /** Most elements a top-level array (a batch) may hold. */
  maxBatch: number;
}

export interface ElementSpan {
  index: number;
  /** Byte offsets in the body: [start, end). */
  start: number;
  end: number;
  /** Offset of the first opening bracket past the depth limit, when the element nests too deep. */
  tooDeepAt?: number;
}

export type JsonShape =
  /** Not an array at the top (one event, or not JSON at all). */
  | { kind: 'single'; balanced: boolean }
  | { kind: 'batch'; balanced: boolean; elements: ElementSpan[] }
  /** A single body nesting deeper than the limit: refused whole. */
  | { kind: 'too-deep'; at: number }
  | { kind: 'too-many'; count: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

export function scanJson(body: Buffer, limits: JsonLimits): JsonShape {
  let i = 0;
  // A UTF-8 byte order mark is skipped like JSON.parse of the decoded text would.
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) i = 3;
  while (i < body.length && isSpace(body[i]!)) i += 1;
  const batch = body[i] === OPEN_ARRAY;

  let depth = 0;
  let inString = false;
  const elements: ElementSpan[] = [];
  let current: ElementSpan | undefined;
  // Too many elements is known before the end: stop counting spans past the limit.
  let count = 0;

  const openElement = (at: number) => {
    count += 1;
    current = count <= limits.maxBatch ? { index: count - 1, start: at, end: at } : undefined;
    if (current) elements.push(current);
  };

  for (; i < body.length; i += 1) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (batch && depth === 1 && current === undefined && count === 0 && !isSpace(byte) && byte !== CLOSE_ARRAY) openElement(i);
    if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      // Inside a batch the array itself is level 0: an element nests from 1, like a single event.
      const level = batch ? depth - 1 : depth;
      if (level > limits.maxDepth) {
        if (!batch || depth === 1) return { kind: 'too-deep', at: i };
        if (current && current.tooDeepAt === undefined) current.tooDeepAt = i;
      }
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
      if (batch && depth === 0) {
        if (current) current.end = i;
        current = undefined;
      }
    } else if (byte === COMMA && batch && depth === 1) {
      if (current) current.end = i;
      openElement(i + 1);
    }
  }
  if (batch && count > limits.maxBatch) return { kind: 'too-many', count };
  const balanced = depth === 0 && !inString;
  if (!batch) return { kind: 'single', balanced };
  for (const element of elements) {
    // Trim the whitespace around each element so its span is exactly the element as sent.
    while (element.start < element.end && isSpace(body[element.start]!)) element.start += 1;
    while (element.end > element.start && isSpace(body[element.end - 1]!)) element.end -= 1;
  }
  return { kind: 'batch', balanced, elements };
}

/**
 * The body with the elements nesting too deep replaced by `null`, so the connector reads every
 * other element (indices unchanged) and never holds the deep structure.
 */
export function withoutDeepElements(body: Buffer, elements: readonly ElementSpan[]): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const element of elements) {
    if (element.tooDeepAt === undefined) continue;
    parts.push(body.subarray(from, element.start), Buffer.from('null'));
    from = element.end;
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}
