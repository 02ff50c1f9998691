import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { describeIssues } from '../domain/field-errors.js';

/**
 * `<TAXSYNC_DATA_DIR>/daemon.json`: where a running zero-configuration `taxsync start` keeps its
 * Redis, its built-in emulator and its webhook listener, so the other commands run in the same
 * folder (`status`, `trace`, `dlq`, `vat`, `ingest`, `demo`, `faults`) talk to them instead of
 * starting their own. It holds no secret: the Redis is a unix socket under the same folder (a
 * configured REDIS_URL, which may carry a password, is never written), and the emulator takes
 * the published development credentials.
 */

export const DaemonInfo = z.object({
  v: z.literal(1),
  pid: z.number().int().positive(),
  command: z.string(),
  started_at: z.string(),
  /** The webhook listener, e.g. http://127.0.0.1:8080. */
  http_url: z.string(),
  /** The local redis-server's socket; absent when the daemon uses a configured REDIS_URL. */
  redis_socket: z.string().optional(),
  /** The built-in emulator (with its control API); absent when TAX_API_URL is set. */
  emulator_url: z.string().optional(),
});
export type DaemonInfo = z.infer<typeof DaemonInfo>;

export const DAEMON_FILE = 'daemon.json';

export const daemonFilePath = (dataDir: string): string => resolve(dataDir, DAEMON_FILE);

/** Written to a temporary file and renamed over the old one, so a reader never sees half a file. */
export function writeDaemonFile(dataDir: string, info: DaemonInfo): string {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, DAEMON_FILE);
  const temporary = join(dir, `.${DAEMON_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`);
  writeFileSync(temporary, `${JSON.stringify(DaemonInfo.parse(info), null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
  return path;
}

/** Removes the file if it is still the one `pid` wrote: a second daemon may have replaced it. */
export function removeDaemonFile(dataDir: string, pid: number): void {
  const found = readDaemonFile(dataDir);
  if (found.state !== 'none' && found.state !== 'unreadable' && found.info.pid !== pid) return;
  rmSync(daemonFilePath(dataDir), { force: true });
}

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type DaemonFileState =
  | { state: 'none' }
  | { state: 'unreadable'; reason: string }
  /** Its process is gone (killed, crashed): nothing it names can be trusted. */
  | { state: 'stale'; info: DaemonInfo }
  | { state: 'running'; info: DaemonInfo };

export function readDaemonFile(dataDir: string): DaemonFileState {
  let text: string;
  try {
    text = readFileSync(daemonFilePath(dataDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'none' };
    return { state: 'unreadable', reason: (error as Error).message };
  }
  let parsed: ReturnType<typeof DaemonInfo.safeParse>;
  try {
    parsed = DaemonInfo.safeParse(JSON.parse(text));
  } catch (error) {
    return { state: 'unreadable', reason: (error as Error).message };
  }
  if (!parsed.success) return { state: 'unreadable', reason: describeIssues(parsed.error.issues, { whole: '(file)' }) };
  return processAlive(parsed.data.pid) ? { state: 'running', info: parsed.data } : { state: 'stale', info: parsed.data };
}
