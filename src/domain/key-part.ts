import { TaxsyncError } from './errors.js';

/**
 * True when the text has a lone UTF-16 surrogate (JSON allows `"\ud800"`). Such a string is not
 * well-formed Unicode: it cannot be percent-encoded into a Redis key (encodeURIComponent throws a
 * URIError), so an id carrying one is refused as invalid input wherever it enters.
 */
export function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

export const LONE_SURROGATE = 'must be well-formed Unicode (it contains a lone surrogate such as \\ud800)';

/**
 * An id percent-encoded for a key. Total: an id that cannot be encoded is an INVALID_PAYLOAD
 * error naming `field`, never a URIError (schemas refuse such ids first; this is the backstop for
 * a path that skipped them, a replay of old data say).
 */
export function keyPart(text: string, field: string): string {
  if (hasLoneSurrogate(text)) {
    throw new TaxsyncError('INVALID_PAYLOAD', `${field} ${LONE_SURROGATE}`, { fields: { [field]: [LONE_SURROGATE] } });
  }
  return encodeURIComponent(text);
}
