import { describe, expect, it } from 'vitest';
import { createEmulator } from '../../../src/emulator/index.js';

describe('the factory without listen()', () => {
  it('serves through inject(): token, verify, and an upsert', async () => {
    const emulator = createEmulator({ tokenTtlSeconds: 30 });
    try {
      const token = await emulator.app.inject({ method: 'POST', url: '/v1/auth/token', payload: { client_id: 'taxsync-dev', client_secret: 'taxsync-dev-secret' } });
      expect(token.statusCode).toBe(200);
      const { access_token: accessToken, expires_in: expiresIn } = token.json<{ access_token: string; expires_in: number }>();
      expect(expiresIn).toBe(30);
      const headers = { authorization: `Bearer ${accessToken}` };
      expect((await emulator.app.inject({ method: 'POST', url: '/v1/auth/verify', headers })).json()).toMatchObject({ sub: 'taxsync-dev' });
      const upsert = await emulator.app.inject({ method: 'PUT', url: '/v1/customers/', headers, payload: { source: 'api', external_id: 'c-1' } });
      expect(upsert.statusCode).toBe(201);
      emulator.clock.advance(30_000);
      expect((await emulator.app.inject({ method: 'POST', url: '/v1/auth/verify', headers })).statusCode).toBe(401);
    } finally {
      await emulator.close();
    }
  });
});

describe('the control API', () => {
  it('is off unless enabled', async () => {
    const emulator = createEmulator();
    const res = await emulator.app.inject({ method: 'GET', url: '/__emulator/requests' });
    expect(res.statusCode).toBe(404);
    await emulator.close();
  });
});

describe('a dropped connection under inject()', () => {
  it('rejects the inject promise after the change was applied', async () => {
    const emulator = createEmulator({ faults: [{ kind: 'drop', route: 'auth.token', times: 1 }] });
    try {
      const payload = { client_id: 'taxsync-dev', client_secret: 'taxsync-dev-secret' };
      await expect(emulator.app.inject({ method: 'POST', url: '/v1/auth/token', payload })).rejects.toThrow(/connection dropped/);
      expect(emulator.requestLog.entries()[0]).toMatchObject({ outcome: 'dropped', status: 200 });
      expect((await emulator.app.inject({ method: 'POST', url: '/v1/auth/token', payload })).statusCode).toBe(200);
    } finally {
      await emulator.close();
    }
  });
});
