import { createHash } from 'node:crypto';

/** A name-based UUID (version 5 layout): the same name always gives the same id across runs. */
export function stableUuid(name: string): string {
  const hex = createHash('sha1').update(`taxsync-emulator:${name}`).digest('hex');
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}
