import { existsSync } from 'node:fs';

/**
 * Debian's chromium (playwright's own browser download does not work where this runs), or any
 * Chromium / Chrome binary named by TAXSYNC_TEST_CHROMIUM (macOS, other distributions).
 */
export const CHROMIUM = process.env.TAXSYNC_TEST_CHROMIUM || '/usr/bin/chromium';

/**
 * Whether the browser tests can run. Without Chromium they are skipped with one line saying why,
 * so a newcomer's first `npm test` is not red; CI sets TAXSYNC_REQUIRE_BROWSER=1, where a missing
 * browser is an error instead.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const how = `install Chromium (Debian: apt-get install chromium; .ci/run does it) or set TAXSYNC_TEST_CHROMIUM to a Chromium or Chrome binary`;
  if (process.env.TAXSYNC_REQUIRE_BROWSER === '1') throw new Error(`TAXSYNC_REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM}: ${how}`);
  console.warn(`skipping the browser tests: no Chromium at ${CHROMIUM} (${how})`);
  return false;
}
