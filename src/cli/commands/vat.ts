import { createInterface } from 'node:readline/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { RegistrationCreateRequest, RegistrationListQuery, Registration } from '../../api/schemas/index.js';
import type { VatClient } from '../../api/vat-client.js';
import { createRedis } from '../../queue/connection.js';
import { createKeys } from '../../queue/keys.js';
import { createVatLedger, type VatLedger } from '../../queue/vat-ledger.js';
import { boot, type Booted } from '../../daemon/boot.js';
import { clientApi, clientRedis } from '../../daemon/find-daemon.js';
import {
  approveFiling,
  closeRegistration,
  createFiling,
  createRegistration,
  filingBoxes,
  filingFiles,
  listRegistrations,
  reconcileVat,
  showFiling,
  showRegistration,
  transactionTypes,
  updateRegistration,
} from '../../vat-ops/commands.js';
import { EMULATOR_BOX_LAYOUT, renderReconcile, type BoxLayout } from '../../vat-ops/reconcile.js';
import { registerVatLedgerCommands } from './vat-ledger.js';

interface Json {
  json?: boolean;
}

const date = (value: string): string => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new InvalidArgumentError('expected YYYY-MM-DD');
  return value;
};
const boxList = (value: string): string[] => value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);

function print(options: Json, value: unknown, text: () => string): void {
  process.stdout.write(`${options.json ? JSON.stringify(value) : text()}\n`);
}

/** `key: value` lines; nested objects as JSON. */
function fields(value: object): string {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}

function registrationRow(r: Registration): string {
  return [
    r.id,
    (r.taxable_jurisdiction_detail?.iso ?? '?').padEnd(5),
    (r.registration_type ?? '?').padEnd(14),
    (r.status ?? '?').padEnd(8),
    `ej ${r.entity_jurisdiction ?? '?'}`,
    r.number ? `number ${r.number}` : '',
    r.date_of_registration ? `from ${r.date_of_registration}` : '',
    r.date_registration_closed ? `closed ${r.date_registration_closed}` : '',
  ]
    .filter(Boolean)
    .join('  ');
}

/** Boots, runs `fn`, shuts down (also on errors, which then reach exitWith through main.ts). */
async function run(name: string, fn: (booted: Booted) => Promise<void>): Promise<void> {
  const booted = boot(`vat ${name}`, { logToStderr: true });
  try {
    await fn(booted);
  } finally {
    await booted.lifecycle.shutdown(`vat ${name} finished`);
  }
}

async function withVat(name: string, fn: (vat: VatClient) => Promise<void>): Promise<void> {
  await run(name, async (booted) => {
    const clients = await clientApi(booted);
    await fn(clients.vat);
  });
}

const registrationFieldOptions = (command: Command, create: boolean): Command =>
  command
    .option('--number <n>', 'registration number (max 20)')
    .option('--number-local <n>', 'local registration number (max 20)')
    .option('--fiscal-code <code>', 'fiscal code (max 16)')
    .option('--registration-type <type>', 'standard, one_stop_shop, … (omitted: the service default)')
    .option('--date-of-registration <date>', 'when it became active', date)
    .option(`--date-registration-closed <date>`, create ? 'closing date (triggers deregistration)' : 'closing date (prefer `vat registrations close`)', date)
    .option('--date-of-filing-start <date>', 'first filing date', date)
    .option('--fiscal-representative-type <type>', 'agent, not_required or managed_service_provider')
    .option('--direct-debit-setup', 'direct debit is set up')
    .option('--no-direct-debit-setup', 'direct debit is not set up')
    .option('--entity-responsible-for-payment <who>', 'client_direct_debit, client_manual_payment or managed_service_provider_direct_debit')
    .option('--iban <iban>', 'IBAN (max 35)')
    .option('--json', 'machine-readable output');

interface RegistrationFlags extends Json {
  taxableJurisdiction?: string;
  entity?: string;
  number?: string;
  numberLocal?: string;
  fiscalCode?: string;
  registrationType?: string;
  dateOfRegistration?: string;
  dateRegistrationClosed?: string;
  dateOfFilingStart?: string;
  fiscalRepresentativeType?: string;
  directDebitSetup?: boolean;
  entityResponsibleForPayment?: string;
  iban?: string;
}

/** The flags as a request body; the client's schema checks enums and lengths (one-line errors). */
function registrationBody(flags: RegistrationFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {
    taxable_jurisdiction: flags.taxableJurisdiction,
    entity: flags.entity,
    number: flags.number,
    number_local: flags.numberLocal,
    fiscal_code: flags.fiscalCode,
    registration_type: flags.registrationType,
    date_of_registration: flags.dateOfRegistration,
    date_registration_closed: flags.dateRegistrationClosed,
    date_of_filing_start: flags.dateOfFilingStart,
    fiscal_representative_type: flags.fiscalRepresentativeType,
    direct_debit_setup: flags.directDebitSetup,
    entity_responsible_for_payment: flags.entityResponsibleForPayment,
    iban: flags.iban,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

async function askOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export function registerVatCommands(program: Command): void {
  const vat = program.command('vat').description('the VAT service: transaction types, registrations, filings, and reconcile against the ledger');

  vat
    .command('types')
    .description('the transaction types list (ids for transaction_type_id)')
    .option('--json', 'machine-readable output')
    .action(async (options: Json) => {
      await withVat('types', async (client) => {
        const types = await transactionTypes(client);
        print(options, types, () => types.map((t) => `${t.id}  ${t.name}${t.description ? `  ${t.description}` : ''}`).join('\n'));
      });
    });

  // -- registrations ---------------------------------------------------------------------------
  const registrations = vat.command('registrations').description('registrations of an entity in a taxable jurisdiction');

  registrations
    .command('list')
    .description('every registration matching the filters (all pages)')
    .option('--number <n>', 'matches number and number_local')
    .option('--entity <uuid>', 'filter by entity')
    .option('--taxable-jurisdiction <uuid>', 'filter by taxable jurisdiction (its UUID)')
    .option('--entity-jurisdiction <uuid>', 'filter by entity jurisdiction')
    .option('--order-by <field>', 'entity_name, fiscal_code, number, date_of_filing_start, date_of_registration, date_registration_closed; prefix - for descending')
    .option('--json', 'machine-readable output')
    .action(async (options: Json & { number?: string; entity?: string; taxableJurisdiction?: string; entityJurisdiction?: string; orderBy?: string }) => {
      await withVat('registrations list', async (client) => {
        const filters = Object.fromEntries(
          Object.entries({
            number: options.number,
            entity: options.entity,
            taxable_jurisdiction: options.taxableJurisdiction,
            entity_jurisdiction: options.entityJurisdiction,
            order_by: options.orderBy,
          }).filter(([, v]) => v !== undefined),
        ) as RegistrationListQuery;
        const list = await listRegistrations(client, filters);
        print(options, list, () => (list.length === 0 ? 'no registrations' : list.map(registrationRow).join('\n')));
      });
    });

  registrations
    .command('show')
    .argument('<id>', 'registration id')
    .description('one registration')
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: Json) => {
      await withVat('registrations show', async (client) => {
        const r = await showRegistration(client, id);
        print(options, r, () => fields(r));
      });
    });

  registrationFieldOptions(
    registrations
      .command('create')
      .description('create a registration (the entity jurisdiction is created with it when absent)')
      .requiredOption('--taxable-jurisdiction <iso>', 'ISO code of the jurisdiction, e.g. DE')
      .requiredOption('--entity <uuid>', 'the entity'),
    true,
  ).action(async (options: RegistrationFlags) => {
    await withVat('registrations create', async (client) => {
      const r = await createRegistration(client, registrationBody(options) as RegistrationCreateRequest);
      print(options, r, () => fields(r));
    });
  });

  registrationFieldOptions(
    registrations
      .command('update')
      .argument('<id>', 'registration id')
      .description('change the given fields (PATCH)')
      .option('--taxable-jurisdiction <iso>', 'ISO code of the jurisdiction')
      .option('--entity <uuid>', 'the entity'),
    false,
  ).action(async (id: string, options: RegistrationFlags) => {
    await withVat('registrations update', async (client) => {
      const r = await updateRegistration(client, id, registrationBody(options));
      print(options, r, () => fields(r));
    });
  });

  registrations
    .command('close')
    .argument('<id>', 'registration id')
    .description('set date_registration_closed: triggers deregistration at the service (asks first unless --yes)')
    .option('--date <date>', 'closing date, default today (UTC)', date)
    .option('--yes', 'do not ask; required when stdin is not a terminal')
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: Json & { date?: string; yes?: boolean }) => {
      await withVat('registrations close', async (client) => {
        const result = await closeRegistration(client, id, {
          ...(options.date === undefined ? {} : { date: options.date }),
          yes: options.yes === true,
          interactive: process.stdin.isTTY === true,
          confirm: askOnTerminal,
        });
        if (!result.closed) throw new Error(`registration ${id} not closed: ${result.reason}`);
        print(options, result.registration, () => fields(result.registration));
      });
    });

  // -- filings -------------------------------------------------------------------------------
  const filings = vat.command('filings').description('VAT returns: create, read, files, draft return boxes, approve');

  filings
    .command('create')
    .description('create a filing (a VAT return) for a reporting period')
    .requiredOption('--registration-filing-type <uuid>', 'registration filing type (the emulator: a registration or entity jurisdiction id)')
    .requiredOption('--start <date>', 'reporting period start', date)
    .requiredOption('--end <date>', 'reporting period end', date)
    .option('--json', 'machine-readable output')
    .action(async (options: Json & { registrationFilingType: string; start: string; end: string }) => {
      await withVat('filings create', async (client) => {
        const f = await createFiling(client, {
          registration_filing_type: options.registrationFilingType,
          reporting_period_start: options.start,
          reporting_period_end: options.end,
        });
        print(options, f, () => fields(f));
      });
    });

  filings
    .command('show')
    .argument('<id>', 'filing id')
    .description('one filing')
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: Json) => {
      await withVat('filings show', async (client) => {
        const f = await showFiling(client, id);
        print(options, f, () => fields(f));
      });
    });

  filings
    .command('files')
    .argument('<id>', 'filing id')
    .description("a filing's files")
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: Json) => {
      await withVat('filings files', async (client) => {
        const files = await filingFiles(client, id);
        print(options, files, () =>
          files.length === 0 ? 'no files' : files.map((f) => `${f.id}  ${f.file_type ?? '?'}  ${f.filename ?? ''}  ${f.download_url ?? ''}`).join('\n'),
        );
      });
    });

  filings
    .command('boxes')
    .argument('<id>', 'filing id')
    .description("a filing's draft return boxes")
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: Json) => {
      await withVat('filings boxes', async (client) => {
        const boxes = await filingBoxes(client, id);
        print(options, boxes, () =>
          [
            `reporting period ${boxes.reporting_period ?? '?'}, total VAT due ${boxes.total_vat_due ?? '?'}`,
            ...boxes.boxes.map((b) => `  ${b.box_number.padStart(3)}  ${(b.value ?? '').padStart(12)} ${b.currency ?? ''}  ${b.description ?? ''}`),
          ].join('\n'),
        );
      });
    });

  filings
    .command('approve')
    .argument('<id>', 'filing id')
    .description('approve a filing (reconcile first: `taxsync vat reconcile --period … --filing <id>`)')
    .option('--approved-by <name>', 'who approves')
    .option('--notes <text>', 'approval notes')
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: Json & { approvedBy?: string; notes?: string }) => {
      await withVat('filings approve', async (client) => {
        const f = await approveFiling(client, id, {
          ...(options.approvedBy === undefined ? {} : { approvedBy: options.approvedBy }),
          ...(options.notes === undefined ? {} : { notes: options.notes }),
        });
        print(options, f, () => fields(f));
      });
    });

  // -- reconcile -----------------------------------------------------------------------------
  vat
    .command('reconcile')
    .description("the ledger's confirmed submissions of a period against a filing's draft return boxes; exit 2 when they differ or are uncertain")
    .requiredOption('--period <period>', 'YYYY-MM or YYYY-Qn')
    .option('--filing <id>', 'the filing to compare with (without it: the ledger side only)')
    .option('--entity-jurisdiction <uuid>', "compare with this entity jurisdiction's submissions (default: the filing's, when the service names it)")
    .option('--net-boxes <list>', 'boxes whose sum is the total net', boxList, EMULATOR_BOX_LAYOUT.net)
    .option('--vat-boxes <list>', 'boxes whose sum is the total VAT', boxList, EMULATOR_BOX_LAYOUT.vat)
    .option('--count-box <n>', "the box with the number of transactions ('none': not compared)", EMULATOR_BOX_LAYOUT.count)
    .option('--json', 'machine-readable output')
    .action(
      async (
        options: Json & { period: string; filing?: string; entityJurisdiction?: string; netBoxes: string[]; vatBoxes: string[]; countBox: string },
      ) => {
        await run('reconcile', async (booted) => {
          const { config, lifecycle } = booted;
          const redis = createRedis(await clientRedis(booted), 'worker');
          lifecycle.onShutdown('redis', async () => {
            redis.disconnect();
            await Promise.resolve();
          });
          const ledger: VatLedger = createVatLedger(redis, createKeys(config.redis.prefix), { leaseMs: config.queue.vat.leaseMs });
          const client = options.filing === undefined ? undefined : (await clientApi(booted)).vat;
          const layout: BoxLayout = {
            net: options.netBoxes,
            vat: options.vatBoxes,
            ...(options.countBox === 'none' ? {} : { count: options.countBox }),
          };
          const report = await reconcileVat(
            { ledger, ...(client ? { vat: client } : {}) },
            {
              period: options.period,
              layout,
              ...(options.filing === undefined ? {} : { filingId: options.filing }),
              ...(options.entityJurisdiction === undefined ? {} : { entityJurisdiction: options.entityJurisdiction }),
            },
          );
          print(options, report, () => renderReconcile(report));
          if (report.matches === false) process.exitCode = 2;
        });
      },
    );

  registerVatLedgerCommands(vat, { run, print });
}
