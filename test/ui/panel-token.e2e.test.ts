/**
 * The token: checked with `GET /whoami` when entered, accepted in the
 * URL fragment and taken out of the address bar, kept in sessionStorage only, with the focus
 * where the user can go on, and a header pill that never uses the words of a policy state.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import { ADMIN_TOKEN, type RunningService } from './demo-service.js';

const harness = useBrowserHarness();
const STORAGE_KEY = 'idea-pdp.token';

describe.skipIf(!browserTestsEnabled)('panel token (chromium, real service)', { timeout: 30_000 }, () => {
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const stored = (): Promise<{ session: string | null; local: number }> =>
    page().evaluate((key) => ({ session: sessionStorage.getItem(key), local: localStorage.length }), STORAGE_KEY);

  it('refuses a wrong token at once, keeping the focus in the field; Enter with the right one moves on to the targets', async () => {
    await page().goto(`${service().baseUrl}/ui/`);
    const input = page().getByLabel('Jeton', { exact: true });
    await input.fill('not-the-token');
    await input.press('Enter');
    await expect.poll(() => text(page().locator('#token-error')), POLL).toContain('Jeton refusé par le service');
    expect(await harness.focusedId()).toBe('token-input');
    expect(await stored()).toEqual({ session: null, local: 0 });
    expect(await text(page().locator('#token-pill'))).toBe('Sans jeton : consultation seulement');

    await input.fill(ADMIN_TOKEN);
    await input.press('Enter');
    await expect.poll(() => text(page().locator('#token-pill')), POLL).toBe('Jeton administrateur vérifié');
    await expect.poll(() => harness.focusedId(), POLL).toBe('target-default');
    expect(await page().locator('form.token-form').count()).toBe(0);
    expect(await stored()).toEqual({ session: ADMIN_TOKEN, local: 0 });
  });

  it('takes the token from #token=, removes it from the address bar, and never sends it in a URL', async () => {
    const urls: string[] = [];
    page().on('request', (request) => urls.push(request.url()));
    await page().goto(`${service().baseUrl}/ui/?project=demo#token=${encodeURIComponent(ADMIN_TOKEN)}`);
    await expect.poll(() => text(page().locator('#token-pill')), POLL).toBe('Jeton administrateur vérifié');
    expect(await page().evaluate(() => window.location.href)).toBe(`${service().baseUrl}/ui/?project=demo`);
    expect(await page().evaluate(() => history.length)).toBe(2); // about:blank, then the panel: replaced, not pushed
    expect(await stored()).toEqual({ session: ADMIN_TOKEN, local: 0 });
    expect(urls.some((url) => url.includes(ADMIN_TOKEN))).toBe(false);
    await harness.target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).waitFor();
  });

  it('does not keep a wrong token from the address, and says so', async () => {
    await page().goto(`${service().baseUrl}/ui/#token=wrong-token`);
    await expect.poll(() => text(page().locator('form.token-form')), POLL).toContain('Le jeton donné dans l\u2019adresse');
    expect(await text(page().locator('#token-error'))).toContain('Jeton refusé');
    expect(await page().evaluate(() => window.location.hash)).toBe('');
    expect(await stored()).toEqual({ session: null, local: 0 });
    expect(await page().getByRole('button', { name: 'Créer un override', exact: true }).count()).toBe(0);
  });

  it('drops a session token the service no longer accepts (a restart with another token) and asks again', async () => {
    await page().addInitScript((key) => {
      sessionStorage.setItem(key, 'token-of-a-previous-run');
    }, STORAGE_KEY);
    await page().goto(`${service().baseUrl}/ui/`);
    await expect.poll(() => text(page().locator('form.token-form')), POLL).toContain('n\u2019est plus accepté');
    expect(await text(page().locator('#token-pill'))).toBe('Sans jeton : consultation seulement');
  });

  it('never words the "no token" pill like the default\u2019s state', async () => {
    await harness.openPanel(null);
    const pill = await text(page().locator('#token-pill'));
    expect(await text(page().locator('#target-default'))).toContain('Lecture seule');
    expect(pill).not.toMatch(/lecture seule/i);
  });
});
