import { isTaxsyncError } from '../domain/errors.js';

/** Prints a one-line reason and exits non-zero; the only place the CLI calls process.exit. */
export function exitWith(error: unknown): never {
  const reason = isTaxsyncError(error) ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
  process.stderr.write(`taxsync: ${reason.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
}
