/**
 * Usage limits in chromium against the real service (docs/api.md#usage-limits): a limit set from
 * the row's editor makes `/decide` refuse the (N+1)th call with `rate_limited`; Refus récents says
 * « limite atteinte » and « Relever la limite » raises it through the same draft and save; removed,
 * the calls are no longer counted. The service keeps its counts across the tests of this file:
 * each test uses its own agent and tool.
 */
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';

const harness = useBrowserHarness();

/** The periodic read of the refusals (5 s) plus room for a loaded machine. */
const LIVE = { timeout: 12_000, interval: 100 };
const MEMORY = 'idea_memory_write';

describe.skipIf(!browserTestsEnabled)('Usage limits (chromium, real service)', { timeout: 60_000 }, () => {
  const { openPanel, target, toolBox, focusedId } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const ids = (tool: string, part: string): string => `#limit-${tool}-${part}`;
  const denial = (tool: string): Locator =>
    page()
      .getByRole('region', { name: 'Refus récents' })
      .getByRole('listitem')
      .filter({ has: page().locator('code', { hasText: tool }) });
  const savedLimits = async (agentId: string | null): Promise<unknown> => {
    const { view } = await service().permissions('demo');
    if (agentId === null) return view.projectDefault.limits;
    return view.agents.find((agent) => agent.agentId === agentId)?.limits;
  };
  /** The accessible description of a tool's checkbox, without what is aria-hidden. */
  const description = (tool: string): Promise<string> =>
    page().evaluate((name) => {
      const ids = document.getElementById(`tool-${name}`)?.getAttribute('aria-describedby')?.split(' ') ?? [];
      return ids
        .map((id) => {
          const copy = document.getElementById(id)?.cloneNode(true);
          if (!(copy instanceof HTMLElement)) return '';
          for (const hidden of copy.querySelectorAll('[aria-hidden="true"]')) hidden.remove();
          return copy.textContent;
        })
        .join(' ');
    }, tool);
  const save = async (): Promise<void> => {
    await page().locator('#save').click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
  };

  it('sets a limit from the panel: the 3rd call is rate_limited; « Relever la limite » then Enregistrer allows the next; removed, nothing is counted', async () => {
    await openPanel();
    await target('QA').click();
    await page().locator('#create-override').click();
    await toolBox('Écrire la mémoire projet', MEMORY).check();
    // The limit lives in the row's editor, beside the conditions.
    await page().locator(`#cond-${MEMORY}-toggle`).click();
    const section = page().getByRole('group', { name: `Limite d’usage de ${MEMORY}` });
    expect(await text(section)).toContain('Aucune limite : les appels autorisés ne sont pas comptés.');
    await section.getByRole('button', { name: `Ajouter une limite d’usage à ${MEMORY}` }).click();
    expect(await focusedId()).toBe(`limit-${MEMORY}-max`);
    expect(await page().locator(ids(MEMORY, 'max')).inputValue()).toBe('20');
    expect(await page().locator(ids(MEMORY, 'unit')).inputValue()).toBe('h');
    await page().locator(ids(MEMORY, 'max')).fill('2');
    await expect.poll(() => text(page().locator(ids(MEMORY, 'summary'))), POLL).toContain('Au plus 2 appels par heure : au-delà');
    expect(await description(MEMORY)).toBe('Ajouté · au plus 2 appels par heure');
    expect(await text(page().locator(`#cond-${MEMORY}-toggle`))).toBe('Conditions · limite');
    await save();
    expect(await savedLimits('QA')).toEqual({ [MEMORY]: { max: 2, per: '1h' } });

    // The service counts from now: 2 calls pass, the 3rd is refused with rate_limited.
    for (let call = 0; call < 2; call += 1) expect((await service().decide('demo', 'QA', MEMORY)).allow).toBe(true);
    const refused = await service().decide('demo', 'QA', MEMORY);
    expect(refused).toMatchObject({ allow: false, reason: 'rate_limited' });
    expect(refused.retryAfterSeconds).toBeGreaterThan(0);

    // Refus récents names it and offers to raise it; the draft only, until Enregistrer.
    const group = denial(MEMORY);
    await expect.poll(() => text(group), LIVE).toContain('limite atteinte');
    expect(await text(group.locator('.denial-limit'))).toBe('Limite actuelle : au plus 2 appels par heure.');
    const writes: string[] = [];
    page().on('request', (sent) => {
      if (sent.method() !== 'GET' && !sent.url().endsWith('/preview')) writes.push(`${sent.method()} ${sent.url()}`);
    });
    await group.getByRole('button', { name: `Relever la limite : ${MEMORY}` }).click();
    await expect.poll(focusedId, POLL).toBe(`limit-${MEMORY}-max`);
    expect(await page().locator(ids(MEMORY, 'max')).inputValue()).toBe('4');
    expect(await harness.status()).toBe(
      `Limite de ${MEMORY} relevée à au plus 4 appels par heure dans le brouillon : Enregistrer pour l’appliquer.`,
    );
    expect(await text(group.locator('.denial-limit'))).toBe('Limite dans le brouillon : au plus 4 appels par heure.');
    expect(writes).toEqual([]);
    expect((await service().decide('demo', 'QA', MEMORY)).reason).toBe('rate_limited');
    await save();
    expect(writes).toHaveLength(1);
    expect(await savedLimits('QA')).toEqual({ [MEMORY]: { max: 4, per: '1h' } });
    expect((await service().decide('demo', 'QA', MEMORY)).allow).toBe(true);

    // « Retirer la limite », Enregistrer: no limit left, calls are no longer counted.
    await page().locator(ids(MEMORY, 'remove')).click();
    expect(await focusedId()).toBe(`limit-${MEMORY}-add`);
    expect(await description(MEMORY)).toBe('Ajouté');
    await save();
    expect(await savedLimits('QA')).toBeUndefined();
    for (let call = 0; call < 5; call += 1) expect((await service().decide('demo', 'QA', MEMORY)).allow).toBe(true);
  });

  it('says a bad max or window in French and waits; on the project default, an agent that inherits is capped', async () => {
    const tool = 'idea_list_agents';
    await openPanel();
    // A tool without arguments: its button is « Limite », its editor the limit only.
    const toggle = page().locator(`#cond-${tool}-toggle`);
    expect(await text(toggle)).toBe('Limite');
    await toggle.click();
    await expect.poll(focusedId, POLL).toBe(`limit-${tool}-add`);
    await page().keyboard.press('Enter');
    await expect.poll(focusedId, POLL).toBe(`limit-${tool}-max`);

    const max = page().locator(ids(tool, 'max'));
    const count = page().locator(ids(tool, 'count'));
    const problem = page().locator(ids(tool, 'problem'));
    await max.fill('0');
    await expect.poll(() => text(problem), POLL).toBe('Nombre d’appels : un entier de 1 à 100\u202f000.');
    expect(await max.getAttribute('aria-invalid')).toBe('true');
    expect(await page().locator('#save').getAttribute('aria-disabled')).toBe('true');
    expect(await text(page().locator('#conditions-incomplete'))).toBe(
      `Limite invalide sur ${tool} : Nombre d’appels : un entier de 1 à 100\u202f000.`,
    );
    await max.fill('3');
    await count.fill('8');
    await page().locator(ids(tool, 'unit')).selectOption('d');
    await expect.poll(() => text(problem), POLL).toBe('Fenêtre trop longue : 7 jours au plus.');
    expect(await count.getAttribute('aria-invalid')).toBe('true');
    await count.fill('');
    await expect.poll(() => text(problem), POLL).toBe('Indiquez la durée de la fenêtre (un entier à partir de 1).');
    await count.fill('10');
    await page().locator(ids(tool, 'unit')).selectOption('m');
    await expect.poll(() => text(page().locator(ids(tool, 'summary'))), POLL).toContain('Au plus 3 appels par 10 minutes');
    expect(await page().locator('#save').getAttribute('aria-disabled')).toBeNull();
    await save();
    expect(await savedLimits(null)).toEqual({ [tool]: { max: 3, per: '10m' } });

    // Git has no override: the default's limit is the one in force.
    for (let call = 0; call < 3; call += 1) expect((await service().decide('demo', 'Git', tool)).allow).toBe(true);
    expect(await service().decide('demo', 'Git', tool)).toMatchObject({ allow: false, reason: 'rate_limited' });
    await target('Git').click();
    expect(await text(page().locator('.tool-row', { hasText: tool }).locator('.limit-text'))).toContain('au plus 3 appels par 10 minutes');
    // An agent that inherits: « Créer un override et relever la limite » does both.
    const group = denial(tool);
    await expect.poll(() => text(group), LIVE).toContain('limite atteinte');
    await group.getByRole('button', { name: `Créer un override et relever la limite : ${tool}` }).click();
    expect(await text(page().locator('.mode'))).toContain('Override personnalisé');
    await expect.poll(() => page().locator(ids(tool, 'max')).inputValue(), POLL).toBe('6');
    await save();
    expect(await savedLimits('Git')).toEqual({ [tool]: { max: 6, per: '10m' } });
    expect((await service().decide('demo', 'Git', tool)).allow).toBe(true);
  });

  it('says in French why the service refused the limits, and keeps the draft', async () => {
    await page().route('**/mcp-tool-permissions/agents/DevFrontend', async (route) => {
      if (route.request().method() !== 'PUT') return route.fallback();
      return route.fulfill({
        status: 400,
        contentType: 'application/json',
        body: JSON.stringify({
          error: {
            code: 'invalid_limits',
            message:
              'Invalid limits (idea_ask_agent: invalid limit: max expects an integer from 1 to 100000, got the number 0); nothing was written.',
            details: {
              problems: [{ tool: 'idea_ask_agent', message: 'invalid limit: max expects an integer from 1 to 100000, got the number 0' }],
            },
          },
        }),
      });
    });
    await openPanel();
    await target('DevFrontend').click();
    await page().locator('#cond-idea_ask_agent-toggle').click();
    await page().locator(ids('idea_ask_agent', 'add')).click();
    await page().locator('#save').click();
    await expect
      .poll(() => text(page().locator('.actions-area')), POLL)
      .toContain(
        'Le service a refusé ces limites d’usage (un tool qui n’est plus autorisé ni sur demande, ou une limite mal formée). Rien n’a été modifié. (idea_ask_agent : nombre d’appels attendu : un entier de 1 à 100\u202f000)',
      );
    expect(await text(page().locator('.actions'))).toContain('Modifications non enregistrées');
    expect(await page().locator(ids('idea_ask_agent', 'max')).inputValue()).toBe('20');
  });

  it('writes an override’s limits back when its reset is undone (a reset and undo never lift a cap)', async () => {
    const policy = {
      allowedTools: ['idea_ticket_read', 'idea_ask_agent'],
      limits: { idea_ask_agent: { max: 7, per: '1d' } },
    };
    expect((await service().admin('PUT', '/projects/demo/mcp-tool-permissions/agents/Architect', policy)).status).toBe(200);
    await openPanel();
    await target('Architect').click();
    expect(await description('idea_ask_agent')).toContain('au plus 7 appels par jour');
    await page().locator('#reset-override').click();
    await page().locator('#undo').click();
    await expect.poll(() => harness.status(), POLL).toBe('Override de « Architect » rétabli.');
    expect(await savedLimits('Architect')).toEqual({ idea_ask_agent: { max: 7, per: '1d' } });
  });
});
