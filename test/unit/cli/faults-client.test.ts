import { describe, expect, it } from 'vitest';
import { addFault, clearFaults, describeFault, listFaults } from '../../../src/cli/faults-client.js';
import { startEmulator } from '../../../src/emulator/index.js';
import { useEmulatorClients as useEmulator } from '../../helpers/emulator-clients.js';

describe('taxsync faults, against the emulator control API', () => {
  const ctx = useEmulator({ control: true });

  it('makes the next customer upsert answer 422, once, and says how often it fired', async () => {
    const added = await addFault(ctx.emulator.url, { kind: 'error', route: 'customers.upsert', status: 422, times: 1 });
    expect(added.rules.map(describeFault)).toEqual(['customers.upsert: answer 422 (every request, at most 1 time; fired 0)']);
    const body = { source: 'api', external_id: 'C-1', name: 'Ada' };
    await expect(ctx.clients.tax.customers.upsert(body)).rejects.toMatchObject({ code: 'API_INVALID', status: 422 });
    await expect(ctx.clients.tax.customers.upsert(body)).resolves.toMatchObject({ external_id: 'C-1' });
    expect((await listFaults(ctx.emulator.url)).rules.map(describeFault)).toEqual(['customers.upsert: answer 422 (every request, at most 1 time; fired 1)']);
    await clearFaults(ctx.emulator.url);
    expect((await listFaults(ctx.emulator.url)).rules).toEqual([]);
  });

  it("passes on the emulator's reason for a rule it refuses", async () => {
    await expect(addFault(ctx.emulator.url, { kind: 'error', route: 'customers.upsert', status: 200 })).rejects.toThrow(
      /^the emulator refused the fault rule: status: /,
    );
  });

  it('says when the emulator has no control API', async () => {
    const plain = await startEmulator({ port: 0, host: '127.0.0.1' });
    try {
      await expect(listFaults(plain.url)).rejects.toThrow(/has no control API/);
    } finally {
      await plain.close();
    }
  });
});
