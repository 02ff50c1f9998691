import { Command } from 'commander';
import { registerConfigCommand } from './commands/config.js';

export function buildProgram(): Command {
  const program = new Command('taxsync')
    .description('Keeps the tax engine and the VAT service in step with your ERP and commerce platforms')
    .showHelpAfterError()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  registerConfigCommand(program);
  return program;
}
