/**
 * The draft's preview in chromium against the real service: calls made through /decide, then a
 * change in the panel says before Enregistrer what it would have refused or allowed among them,
 * goes away when the draft is back to the saved policy, and never stands in the way of a save.
 * The service keeps its ring of decisions across the tests of this file: each test changes its own tool.
 */
import type { Locator, Page, Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PREVIEW_DEBOUNCE_MS } from '../../ui/src/controllers/draft-preview.js';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';

const harness = useBrowserHarness();

const isPreview = (request: Request): boolean => request.method() === 'POST' && request.url().endsWith('/mcp-tool-permissions/preview');

describe.skipIf(!browserTestsEnabled)('Aperçu des appels récents (chromium, real service)', { timeout: 40_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const preview = (): Locator => page().locator('#draft-preview');
  const carnet = (): Locator => toolBox("Modifier le carnet d'un ticket", 'idea_ticket_update_carnet');
  /** The calls of DevFrontend to the carnet tool in the service's ring (earlier tests of the file made some). */
  const carnetCalls = async (): Promise<number> => {
    const response = await service().admin('GET', '/projects/demo/decisions?limit=1000');
    const { decisions } = (await response.json()) as { decisions: { requester: string; tool: string }[] };
    return decisions.filter((entry) => entry.requester === 'DevFrontend' && entry.tool === 'idea_ticket_update_carnet').length;
  };
  const memoryWrite = (): Locator => toolBox('Écrire la mémoire projet', 'idea_memory_write');

  it('says « aurait refusé 3 appels récents » before Enregistrer when an allowed tool is unchecked, and nothing once re-checked', async () => {
    for (let call = 0; call < 3; call += 1) {
      expect(await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).toMatchObject({ allow: true });
    }
    await openPanel();
    await target('DevFrontend').click();
    const before = (await service().permissions('demo')).view.revision;

    await carnet().uncheck();
    await expect
      .poll(() => text(preview()), POLL)
      .toBe('Ce changement aurait refusé 3 appels récents : DevFrontend · idea_ticket_update_carnet ×3.');
    expect(await preview().getAttribute('aria-live')).toBe('polite');
    // Said in the save bar, before Enregistrer, and read out by the page's polite region for the preview.
    const order = await page().evaluate(() => {
      const shown = document.getElementById('draft-preview');
      const save = document.getElementById('save');
      return shown !== null && save !== null && (shown.compareDocumentPosition(save) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    });
    expect(order).toBe(true);
    expect(await page().locator('#preview-announcer').innerText()).toContain('aurait refusé 3 appels récents');
    // Nothing was written: the service still allows the call.
    expect((await service().permissions('demo')).view.revision).toBe(before);
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(true);

    await carnet().check();
    await expect.poll(() => preview().count(), POLL).toBe(0);
    expect(await text(page().locator('.editor'))).not.toContain('Modifications non enregistrées');
    expect(await page().locator('#preview-announcer').innerText()).toBe('');
  });

  it('says « aurait autorisé » for refused calls a checked tool lets through, and both sides of a mixed change', async () => {
    for (let call = 0; call < 2; call += 1) {
      expect(await service().decide('demo', 'DevFrontend', 'idea_memory_write')).toMatchObject({ allow: false });
    }
    await openPanel();
    await target('DevFrontend').click();
    await memoryWrite().check();
    await expect
      .poll(() => text(preview()), POLL)
      .toBe('Ce changement aurait autorisé 2 appels récents : DevFrontend · idea_memory_write ×2.');

    // A second change in the same draft: the answer describes the whole draft, refusals first.
    const calls = await carnetCalls();
    expect(calls).toBeGreaterThan(1);
    await carnet().uncheck();
    await expect
      .poll(() => preview().locator('p').allInnerTexts(), POLL)
      .toEqual([
        `Ce changement aurait refusé ${calls} appels récents : DevFrontend · idea_ticket_update_carnet ×${calls}.`,
        'Ce changement aurait autorisé 2 appels récents : DevFrontend · idea_memory_write ×2.',
      ]);

    // Saved: the preview goes with the draft, and /decide follows the saved policy.
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await preview().count()).toBe(0);
    expect((await service().decide('demo', 'DevFrontend', 'idea_memory_write')).allow).toBe(true);
  });

  it('says « Aucun appel récent ne change. » for a change no recent call touches, and sends one preview per pause', async () => {
    await page().clock.install();
    await openPanel();
    await target('DevFrontend').click();
    const sent: string[] = [];
    page().on('request', (request) => {
      if (isPreview(request)) sent.push(request.postData() ?? '');
    });
    // The page's clock stands still: three clicks fall in one pause however slow the machine is.
    await page().clock.pauseAt(new Date(Date.now() + 60_000));
    const box = toolBox('Créer un skill', 'idea_create_skill');
    await box.check();
    await box.uncheck();
    await box.check();
    await page().clock.runFor(PREVIEW_DEBOUNCE_MS - 1);
    expect(sent).toHaveLength(0);
    await page().clock.runFor(1);
    await expect.poll(() => text(preview()), POLL).toBe('Aucun appel récent ne change.');
    expect(sent).toHaveLength(1);
    // The whole document a save would leave: the other targets as saved, this override with the new tool.
    const body = JSON.parse(sent[0] ?? '{}') as {
      document: { version: number; agents: { agentId: string; policy: { allowedTools: string[] } }[] };
    };
    expect(body.document.version).toBe(1);
    expect(body.document.agents.map((agent) => agent.agentId)).toEqual(['DevFrontend']);
    expect(body.document.agents[0]?.policy.allowedTools).toContain('idea_create_skill');
  });

  it('drops the answer of an earlier draft that comes after the latest one', async () => {
    // The earlier draft (carnet unchecked) would refuse these: its answer differs from the latest one's.
    await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet');
    await openPanel();
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let seen = 0;
    await page().route('**/mcp-tool-permissions/preview', async (route) => {
      seen += 1;
      if (seen === 1) await held; // the first draft's answer is late
      await route.continue();
    });
    let finished = 0;
    page().on('requestfinished', (request) => {
      if (isPreview(request)) finished += 1;
    });
    await target('DevFrontend').click();
    await carnet().uncheck();
    await expect.poll(() => seen, POLL).toBe(1);
    await carnet().check();
    await toolBox('Créer un skill', 'idea_create_skill').check();
    await expect.poll(() => text(preview()), POLL).toBe('Aucun appel récent ne change.');
    release();
    await expect.poll(() => finished, POLL).toBe(2);
    // The late answer (« aurait refusé … idea_ticket_update_carnet ») describes a draft that is gone.
    await page().waitForTimeout(100);
    expect(await text(preview())).toBe('Aucun appel récent ne change.');
  });

  it('shows a quiet line when the preview fails, and Enregistrer still saves', async () => {
    await openPanel();
    await page().route('**/mcp-tool-permissions/preview', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'unavailable', message: 'down' } }),
      }),
    );
    await target('DevFrontend').click();
    await toolBox('Créer un skill', 'idea_create_skill').check();
    await expect.poll(() => text(preview()), POLL).toMatch(/^Aperçu des appels récents indisponible\./);
    expect(await page().getByRole('button', { name: 'Enregistrer' }).getAttribute('aria-disabled')).toBeNull();
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect((await service().decide('demo', 'DevFrontend', 'idea_create_skill')).allow).toBe(true);
  });
});
