import { InvalidArgumentError, type Command } from 'commander';
import { boot, type Booted } from '../../daemon/boot.js';
import { addFault, clearFaults, describeFault, listFaults, type FaultList } from '../faults-client.js';
import { clientEmulatorUrl } from '../../daemon/find-daemon.js';

const KINDS = ['error', 'rate_limit', 'latency', 'drop', 'expire_token'] as const;

const wholeIn = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
  return n;
};
const share = (value: string) => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('expected a number from 0 to 1');
  return n;
};
const kind = (value: string) => {
  if (!(KINDS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${KINDS.join(', ')}`);
  return value;
};

/** The emulator the daemon of this folder sends to, or the one TAX_API_URL names. */
async function withEmulator(name: string, fn: (url: string) => Promise<void>): Promise<void> {
  const booted: Booted = boot(`faults ${name}`, { logToStderr: true });
  try {
    const url = booted.config.usesEmulator ? await clientEmulatorUrl(booted.config) : (booted.config.taxApi.url as string);
    await fn(url);
  } finally {
    await booted.lifecycle.shutdown(`faults ${name} finished`);
  }
}

function render(list: FaultList): string {
  return list.rules.length === 0 ? 'no fault rules' : list.rules.map(describeFault).join('\n');
}

export function registerFaultsCommand(program: Command): void {
  const faults = program
    .command('faults')
    .description("fault rules of the running daemon's built-in emulator (or of TAX_API_URL's emulator started with --control): make calls fail on purpose");

  faults
    .command('add')
    .description('add a rule, e.g. `faults add --route customers.upsert --status 422 --times 1` (docs/emulator.md, "Faults")')
    .requiredOption('--route <name>', 'endpoint name (customers.upsert, transactions.upsert, vat.submit, …), a prefix with * (customers.*), or *')
    .option('--kind <kind>', `what happens: ${KINDS.join(', ')}`, kind, 'error')
    .option('--status <code>', 'error: the status to answer (400–599; default 500)', wholeIn(400, 599))
    .option('--times <n>', 'fire at most this many times (default: until cleared)', wholeIn(1, 1_000_000))
    .option('--rate <r>', 'share of matching requests (0..1, default 1)', share)
    .option('--retry-after <s>', 'rate_limit, or error: the Retry-After header in seconds', wholeIn(0, 3600))
    .option('--ms <n>', 'latency: milliseconds to wait', wholeIn(0, 600_000))
    .option('--json', 'machine-readable output')
    .action(async (options: { route: string; kind: string; status?: number; times?: number; rate?: number; retryAfter?: number; ms?: number; json?: boolean }) => {
      await withEmulator('add', async (url) => {
        const list = await addFault(url, {
          kind: options.kind,
          route: options.route,
          ...(options.status === undefined ? {} : { status: options.status }),
          ...(options.times === undefined ? {} : { times: options.times }),
          ...(options.rate === undefined ? {} : { rate: options.rate }),
          ...(options.retryAfter === undefined ? {} : { retry_after_s: options.retryAfter }),
          ...(options.ms === undefined ? {} : { ms: options.ms }),
        });
        process.stdout.write(options.json ? `${JSON.stringify(list)}\n` : `fault rules of the emulator at ${url}:\n${render(list)}\n`);
      });
    });

  faults
    .command('list')
    .description('the rules in force, with how often each fired')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      await withEmulator('list', async (url) => {
        const list = await listFaults(url);
        process.stdout.write(options.json ? `${JSON.stringify(list)}\n` : `${render(list)}\n`);
      });
    });

  faults
    .command('clear')
    .description('remove every rule')
    .action(async () => {
      await withEmulator('clear', async (url) => {
        await clearFaults(url);
        process.stdout.write('no fault rules\n');
      });
    });
}
