/**
 * Feedback where the user is: the save confirmation beside
 * Enregistrer with the focus kept, the resets that offer "Annuler" for a few seconds, French
 * errors with the technical detail folded, and stale data that cannot be clicked.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { UNDO_MS } from '../../ui/src/controllers/writes.js';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';

const harness = useBrowserHarness();

describe.skipIf(!browserTestsEnabled)('panel feedback (chromium, real service)', { timeout: 30_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;

  it('shows "Permissions enregistrées" beside Enregistrer, announces it, and keeps the focus and the scroll where the user acted', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await toolBox('Créer un skill', 'idea_create_skill').check(); // the last group: the page is scrolled down
    // The user reads the preview line of the save bar, then saves: its going away moves nothing.
    await expect.poll(() => page().locator('#draft-preview').count(), POLL).toBe(1);
    const save = page().getByRole('button', { name: 'Enregistrer' });
    await save.scrollIntoViewIfNeeded();
    const scrollBefore = await page().evaluate(() => window.scrollY);
    expect(scrollBefore).toBeGreaterThan(100);
    await save.focus();
    const saveTop = (): Promise<number> => save.evaluate((element) => element.getBoundingClientRect().top);
    const saveTopBefore = await saveTop();
    await page().keyboard.press('Enter');
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await harness.focusedId()).toBe('save');
    expect(Math.abs((await page().evaluate(() => window.scrollY)) - scrollBefore)).toBeLessThanOrEqual(2);
    expect(Math.abs((await saveTop()) - saveTopBefore)).toBeLessThanOrEqual(2); // still under the pointer
    const seen = await page()
      .locator('#saved-status')
      .evaluate((element) => {
        const box = element.getBoundingClientRect();
        return { text: element.textContent, inView: box.top >= 0 && box.bottom <= window.innerHeight };
      });
    expect(seen).toEqual({ text: 'Permissions enregistrées', inView: true });
    expect((await service().decide('demo', 'DevFrontend', 'idea_create_skill')).allow).toBe(true);
    // Enter again on the (now clean) button does nothing and keeps the focus.
    await page().keyboard.press('Enter');
    expect(await harness.focusedId()).toBe('save');
  });

  it('offers "Annuler" after "Réinitialiser l\u2019override" and writes the previous override back with If-Match', async () => {
    await openPanel();
    await target('DevFrontend').click();
    const methods: { method: string; ifMatch: string }[] = [];
    const etags: string[] = [];
    page().on('request', (request) => {
      if (request.method() !== 'GET') methods.push({ method: request.method(), ifMatch: request.headers()['if-match'] ?? '' });
    });
    page().on('response', (response) => {
      if (response.request().method() === 'DELETE') etags.push(response.headers().etag ?? '');
    });
    await page().getByRole('button', { name: 'Réinitialiser l\u2019override' }).click();
    await expect.poll(() => harness.focusedId(), POLL).toBe('undo');
    expect(await text(page().locator('.undo-notice'))).toContain('Override de « DevFrontend » supprimé');
    expect(await harness.status()).toContain('Annuler');
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(false);

    await page().getByRole('button', { name: 'Annuler', exact: true }).click();
    await expect.poll(async () => (await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow, POLL).toBe(true);
    expect(methods.map((entry) => entry.method)).toEqual(['DELETE', 'PUT']);
    expect(methods[1]?.ifMatch).toBe(etags[0]); // the undo is guarded by the reset's revision
    await expect.poll(() => text(page().locator('.mode')), POLL).toContain('Override personnalisé');
    expect(await harness.focusedId()).toBe('reset-override');
  });

  it('lets "Annuler" of "Revenir à la lecture seule" expire after a few seconds', async () => {
    const custom = await service().admin('PUT', '/projects/demo/mcp-tool-permissions/default', {
      allowedTools: ['idea_list_agents', 'idea_memory_write'],
    });
    expect(custom.status).toBe(200);
    await page().clock.install();
    await openPanel();
    await page().getByRole('button', { name: 'Revenir à la lecture seule' }).click();
    await expect.poll(() => text(page().locator('.undo-notice')), POLL).toContain('Défaut projet remis en lecture seule.');
    expect((await service().decide('demo', 'Main', 'idea_memory_write')).allow).toBe(false);
    await page().clock.fastForward(UNDO_MS + 500);
    await expect.poll(() => page().locator('.undo-notice').count(), POLL).toBe(0);
    expect(await harness.focusedId()).not.toBe(''); // the focus did not fall to the body
    expect((await service().permissions('demo')).view.projectDefault.mode).toBe('builtin');
  });

  it('says a network failure in French, with the browser\u2019s English behind "Détails"', async () => {
    await page().route('**/catalog', (route) => route.abort('failed'));
    await page().goto(`${service().baseUrl}/ui/`);
    await page().getByRole('button', { name: 'Continuer sans jeton' }).click();
    const alert = page().getByRole('alert');
    await expect.poll(() => text(alert), POLL).toContain('Service injoignable');
    expect(await text(alert)).not.toMatch(/fetch|failed/i);
    await alert.getByText('Détails').click();
    expect(await text(alert)).toMatch(/network_error : .*fetch/i);
  });

  it('makes stale data unclickable when a reload fails, and usable again after "Réessayer"', async () => {
    await openPanel();
    await target('DevFrontend').click();
    let failing = true;
    await page().route('**/projects/demo/mcp-tool-permissions', async (route) => {
      if (failing && route.request().method() === 'GET') await route.abort('connectionrefused');
      else await route.continue();
    });
    await page().getByRole('button', { name: 'Actualiser' }).click();
    await expect.poll(() => text(page().getByRole('alert')), POLL).toContain('dernier chargement réussi');
    const inert = await page().evaluate(() => {
      const box = document.getElementById('tool-idea_memory_write') as HTMLInputElement | null;
      box?.focus();
      return { inert: box?.closest('[inert]') !== null, focused: document.activeElement === box };
    });
    expect(inert).toEqual({ inert: true, focused: false });
    failing = false;
    await page().getByRole('button', { name: 'Réessayer' }).click();
    await expect.poll(() => page().locator('[inert]').count(), POLL).toBe(0);
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').check();
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);
  });
});
