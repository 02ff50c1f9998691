import { Command } from 'commander';
// Command modules import only what registering needs; the web server, the admin pages and the
// emulator are imported by the actions that run them, so `taxsync work` does not carry them
// (tens of MB of resident memory per worker process).
import { registerConfigCommand } from './commands/config.js';
import { registerDaemonCommands } from './commands/daemon.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDlqCommands } from './commands/dlq.js';
import { registerEmulatorCommand } from './commands/emulator.js';
import { registerIngestCommand } from './commands/ingest.js';
import { registerResendCommand } from './commands/resend.js';
import { registerReconcileCommands } from './commands/reconcile.js';
import { registerBackfillCommand } from './commands/backfill.js';
import { registerVarianceCommand } from './commands/variance.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatusCommand } from './commands/status.js';
import { registerTraceCommand } from './commands/trace.js';
import { registerVatCommands } from './commands/vat.js';
import { registerFaultsCommand } from './commands/faults.js';
import { setCliVerbose } from '../daemon/boot.js';

export function buildProgram(): Command {
  const program = new Command('taxsync')
    .description('Keeps the tax engine and the VAT service in step with your ERP and commerce platforms')
    .showHelpAfterError()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) })
    .option('--verbose', 'log at info on stderr (commands other than start, serve and work log only warnings; LOG_LEVEL sets any level)')
    .hook('preAction', (_program, action) => setCliVerbose(action.optsWithGlobals<{ verbose?: boolean }>().verbose === true));
  registerConfigCommand(program);
  registerDaemonCommands(program);
  registerEmulatorCommand(program);
  registerServeCommand(program);
  registerIngestCommand(program);
  registerTraceCommand(program);
  registerResendCommand(program);
  registerDemoCommand(program);
  registerDlqCommands(program);
  registerStatusCommand(program);
  registerVatCommands(program);
  registerReconcileCommands(program);
  registerVarianceCommand(program);
  registerBackfillCommand(program);
  registerFaultsCommand(program);
  return program;
}
