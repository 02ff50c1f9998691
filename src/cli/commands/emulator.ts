import { InvalidArgumentError, type Command } from 'commander';
// Types only: the emulator is loaded when the command runs, not with every other command.
import type { FaultRuleInput, VarietyMode } from '../../emulator/index.js';
import { createLogger } from '../../observability/logger.js';

interface EmulatorFlags {
  port: number;
  host: string;
  control?: boolean;
  tokenTtl: number;
  clientId?: string;
  clientSecret?: string;
  vatModule?: string;
  sources?: string[];
  variety: VarietyMode;
  seed: number;
  errorRate?: number;
  errorStatus: 500 | 503;
  rateLimitRate?: number;
  retryAfter: number;
  latency?: number;
  dropRate?: number;
  expireTokenRate?: number;
  faultRoutes: string[];
  log?: boolean;
  json?: boolean;
}

const numberIn = (min: number, max: number, integer: boolean) => (value: string) => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new InvalidArgumentError(`expected ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
  }
  return n;
};
const rate = numberIn(0, 1, false);
const list = (value: string) => value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
const status = (value: string) => {
  if (value !== '500' && value !== '503') throw new InvalidArgumentError('expected 500 or 503');
  return Number(value) as 500 | 503;
};

/** The fault rules the flags describe, one per kind and route. */
export function faultsFromFlags(flags: Omit<EmulatorFlags, 'port' | 'host' | 'tokenTtl' | 'seed' | 'variety'>): FaultRuleInput[] {
  const rules: FaultRuleInput[] = [];
  for (const route of flags.faultRoutes) {
    if (flags.errorRate) rules.push({ kind: 'error', route, rate: flags.errorRate, status: flags.errorStatus });
    if (flags.rateLimitRate) rules.push({ kind: 'rate_limit', route, rate: flags.rateLimitRate, retry_after_s: flags.retryAfter });
    if (flags.latency) rules.push({ kind: 'latency', route, ms: flags.latency });
    if (flags.dropRate) rules.push({ kind: 'drop', route, rate: flags.dropRate });
    if (flags.expireTokenRate) rules.push({ kind: 'expire_token', route, rate: flags.expireTokenRate });
  }
  return rules;
}

const VARIETY_MODES = ['varied', 'strict', 'max'] as const satisfies readonly VarietyMode[];

function varietyMode(value: string): VarietyMode {
  if (!(VARIETY_MODES as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${VARIETY_MODES.join(', ')}`);
  return value as VarietyMode;
}

export function registerEmulatorCommand(program: Command): void {
  program
    .command('emulator')
    .description('run the in-memory emulator of the tax engine and the VAT service (no Redis needed; docs/emulator.md)')
    .option('--port <n>', 'port to listen on; 0 picks a free one', numberIn(0, 65_535, true), 4010)
    .option('--host <h>', 'address to listen on', '127.0.0.1')
    .option('--control', 'serve the control API under /__emulator/ (request log, faults, reset)')
    .option('--token-ttl <s>', 'token lifetime in seconds', numberIn(1, 31_536_000, true), 86_400)
    .option('--client-id <id>', 'accepted client id (default: the built-in development client, taxsync-dev)')
    .option('--client-secret <secret>', 'accepted client secret (default: the built-in development secret)')
    .option('--vat-module <m>', 'module segment of the VAT paths', 'vat')
    .option('--sources <list>', 'accepted source values, comma-separated (default: api and the nine assumed platforms)', list)
    .option('--variety <mode>', 'answers: varied (as a real service\'s, drawn per record), strict (canonical) or max (every variation)', varietyMode, 'varied')
    .option('--seed <n>', 'seed of the fault randomness', numberIn(0, 2 ** 32 - 1, true), 1)
    .option('--error-rate <r>', 'answer this share of requests with --error-status (0..1)', rate)
    .option('--error-status <s>', 'status of injected errors: 500 or 503', status, 500)
    .option('--rate-limit-rate <r>', 'answer this share of requests 429 with Retry-After (0..1)', rate)
    .option('--retry-after <s>', 'Retry-After of injected 429s, seconds', numberIn(0, 3600, true), 1)
    .option('--latency <ms>', 'wait this long before processing each request', numberIn(0, 600_000, true))
    .option('--drop-rate <r>', 'process, then drop the connection without an answer, for this share of requests (0..1)', rate)
    .option('--expire-token-rate <r>', 'expire the presented token before this share of requests (0..1)', rate)
    .option('--fault-routes <names>', 'endpoint names the fault flags apply to, comma-separated (e.g. vat.submit,transactions.*)', list, ['*'])
    .option('--log', 'log every request (JSON lines on stdout)')
    .option('--json', 'print the start line as JSON')
    .action(async (flags: EmulatorFlags) => {
      const { startEmulator, DEFAULT_CLIENT } = await import('../../emulator/index.js');
      const custom = flags.clientId !== undefined || flags.clientSecret !== undefined;
      const client = {
        clientId: flags.clientId ?? DEFAULT_CLIENT.clientId,
        clientSecret: flags.clientSecret ?? DEFAULT_CLIENT.clientSecret,
      };
      const faults = faultsFromFlags(flags);
      const emulator = await startEmulator({
        port: flags.port,
        host: flags.host,
        control: flags.control ?? false,
        tokenTtlSeconds: flags.tokenTtl,
        clients: [client],
        vatModule: flags.vatModule,
        ...(flags.sources === undefined ? {} : { sources: flags.sources }),
        seed: flags.seed,
        variety: flags.variety,
        faults,
        ...(flags.log ? { logger: createLogger({ level: 'info', base: { component: 'emulator' } }) } : {}),
      });
      const info = {
        url: emulator.url,
        client_id: client.clientId,
        control: emulator.settings.control ? `${emulator.url}/__emulator/` : null,
        faults,
      };
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(info)}\n`);
      } else {
        process.stdout.write(`taxsync emulator listening on ${emulator.url}\n`);
        process.stdout.write(
          `  client id ${client.clientId} (${custom ? 'secret as given' : 'the built-in development credentials, see docs/emulator.md'})\n`,
        );
        process.stdout.write(`  control API ${info.control ?? 'off (start with --control)'}\n`);
        process.stdout.write(`  variety ${flags.variety} (docs/emulator.md, "Variety")\n`);
        if (faults.length > 0) process.stdout.write(`  faults (seed ${flags.seed}): ${faults.map((f) => `${f.kind}@${f.route}`).join(', ')}\n`);
      }
      const stop = () => {
        void emulator.close();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
