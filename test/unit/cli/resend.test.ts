import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';

describe('taxsync resend', () => {
  it('is a command taking a connection or a source and an external id, with --kind, --actor and --json', () => {
    const resend = buildProgram().commands.find((c) => c.name() === 'resend');
    expect(resend).toBeDefined();
    expect(resend!.registeredArguments.map((a) => a.name())).toEqual(['connection|source', 'external_id']);
    expect(resend!.options.map((o) => o.long)).toEqual(['--kind', '--actor', '--json']);
  });

  it('refuses VAT submissions before touching Redis: their ledger decides what is sent again', async () => {
    const program = buildProgram().exitOverride();
    await expect(program.parseAsync(['resend', 'api', 'INV-1', '--kind', 'vat'], { from: 'user' })).rejects.toThrow(/--kind must be one of customer, transaction, exemption/);
  });
});
