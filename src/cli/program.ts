import { Command } from 'commander';
import { registerConfigCommand } from './commands/config.js';
import { registerDaemonCommands } from './commands/daemon.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerEmulatorCommand } from './commands/emulator.js';
import { registerIngestCommand } from './commands/ingest.js';
import { registerServeCommand } from './commands/serve.js';
import { registerTraceCommand } from './commands/trace.js';

export function buildProgram(): Command {
  const program = new Command('taxsync')
    .description('Keeps the tax engine and the VAT service in step with your ERP and commerce platforms')
    .showHelpAfterError()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  registerConfigCommand(program);
  registerDaemonCommands(program);
  registerEmulatorCommand(program);
  registerServeCommand(program);
  registerIngestCommand(program);
  registerTraceCommand(program);
  registerDemoCommand(program);
  return program;
}
