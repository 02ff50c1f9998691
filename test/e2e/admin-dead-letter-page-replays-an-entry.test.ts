import { chromium, type Browser, type Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/queue/audit.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { browserAvailable, CHROMIUM } from '../helpers/browser.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpCustomer } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const TOKEN = 'e2e-admin-token-for-the-browser-test';

describe.skipIf(!browserAvailable())('the dead-letter page in a real browser', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;
  let browser: Browser | undefined;

  beforeEach(async () => {
    // Every customer upsert fails with 500 until the fault is cleared; one attempt, then the dead-letter queue.
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      env: { TAXSYNC_ADMIN_TOKENS: `carol:${TOKEN}`, TAXSYNC_MAX_ATTEMPTS: '1' },
      emulator: { faults: [{ kind: 'error', route: 'customers.*', status: 500 }] },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'], timeout: 90_000 });
  }, 120_000);
  afterEach(async () => {
    await browser?.close();
    await daemon?.stop();
  }, 60_000);

  it('signs in, filters, opens an entry and replays it; the record arrives in the emulator', { timeout: 180_000 }, async () => {
    const d = daemon!;
    const deadLetters = createDeadLetterStore(d.queues['dead-letter']);
    expect((await d.post('erp', erpCustomer('C-WEB-1', 1))).status).toBe(202);
    expect((await d.post('erp', erpCustomer('C-WEB-2', 1))).status).toBe(202);
    await eventually(async () => (await deadLetters.count()) === 2, 60_000);
    d.emulator.faults.clear();

    const page: Page = await browser!.newPage();
    page.setDefaultTimeout(60_000);
    const seen: string[] = [];
    const look = async () => seen.push(await page.content());

    const first = await page.goto(`${d.webhookUrl}/admin/dead-letters`);
    expect(first?.status()).toBe(401);
    await page.getByLabel(/admin token/i).fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('2 entries (customers 2; API_SERVER_ERROR 2)').waitFor();
    await look();

    await page.getByLabel('external id').fill('C-WEB-1');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('1 entry (customers 1; API_SERVER_ERROR 1)').waitFor();
    expect(page.url()).toContain('external_id=C-WEB-1');
    await page.getByRole('link', { name: 'customer api/C-WEB-1' }).click();

    await page.getByRole('heading', { name: 'Last HTTP exchange' }).waitFor();
    await page.getByText('answered 500', { exact: true }).waitFor();
    expect(await page.locator('dl').innerText()).toContain('API_SERVER_ERROR');
    await look();

    await page.getByRole('link', { name: 'Replay…' }).click();
    await page.getByText('Replay 1 entry (customers 1; API_SERVER_ERROR 1)?').waitFor();
    await look();
    await page.getByRole('button', { name: 'Replay 1 entry' }).click();
    await page.getByRole('heading', { name: 'Replayed' }).waitFor();
    expect(await page.locator('td.outcome').allInnerTexts()).toEqual(['replayed']);
    await look();

    // The replayed record reaches the tax engine; the other entry stays where it was.
    await eventually(async () => (await d.api.tax.customers.getByKey('api', 'C-WEB-1').catch(() => undefined)) !== undefined, 60_000);
    expect((await deadLetters.list()).map((e) => e.record?.external_id)).toEqual(['C-WEB-2']);
    const [audit] = await createAuditLog(ctx.redis, createKeys(ctx.prefix)).list();
    expect(audit).toMatchObject({ actor: 'admin:web:carol', action: 'replay', count: 1, outcome: '1 replayed' });

    // Bull Board opens on the same session, read-only.
    await page.goto(`${d.webhookUrl}/admin/queues`);
    await page.getByText('vat-submissions').first().waitFor();
    await look();

    // The session is a Secure, HttpOnly, SameSite=Strict cookie (Chromium keeps Secure cookies of
    // http://127.0.0.1: loopback counts as a secure context), and signing out ends it.
    const [session] = (await page.context().cookies()).filter((c) => c.name === 'taxsync_admin');
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict' });
    await page.goto(`${d.webhookUrl}/admin/dead-letters`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const stale = await fetch(`${d.webhookUrl}/admin/dead-letters`, { headers: { cookie: `taxsync_admin=${session!.value}` } });
    expect(stale.status).toBe(401);

    expect(seen.join('\n')).not.toContain(TOKEN);
  });
});
