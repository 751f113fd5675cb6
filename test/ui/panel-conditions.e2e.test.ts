/**
 * Conditions on a tool's arguments in chromium against the real service (docs/api.md#conditions-on-a-tools-arguments): a row
 * says its conditions in French, the inline editor adds and removes one by keyboard only, the save
 * carries it, and `/decide` applies it on the very next call; the preview counts a narrowed
 * condition; Refus récents names the argument that refused.
 */
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';
import { READ_TOOLS } from '../support/tools.js';

const harness = useBrowserHarness();

const CARNET = 'idea_ticket_update_carnet';
/** What the demo policy narrows: DevFrontend may delegate to QA only. */
const DEMO_CONDITIONS = { idea_ask_agent: { agentId: { in: ['QA'] } } };

describe.skipIf(!browserTestsEnabled)('Conditions (chromium, real service)', { timeout: 60_000 }, () => {
  const { openPanel, target, focusedId } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  /** The accessible description of a tool's checkbox (its state, then its conditions), without what is aria-hidden. */
  const description = (tool: string): Promise<string> =>
    page().evaluate((name) => {
      const box = document.getElementById(`tool-${name}`);
      const ids = box?.getAttribute('aria-describedby')?.split(' ') ?? [];
      const spoken = (id: string): string => {
        const copy = document.getElementById(id)?.cloneNode(true);
        if (!(copy instanceof HTMLElement)) return '';
        for (const hidden of copy.querySelectorAll('[aria-hidden="true"]')) hidden.remove();
        return copy.textContent;
      };
      return ids.map(spoken).join(' ');
    }, tool);
  /** Presses Tab (or Shift+Tab) until the element with `id` has the focus. */
  const tabTo = async (id: string, key: 'Tab' | 'Shift+Tab' = 'Tab'): Promise<void> => {
    for (let step = 0; step < 120; step += 1) {
      if ((await focusedId()) === id) return;
      await page().keyboard.press(key);
    }
    throw new Error(`${id} was never reached with ${key} (focus on ${await focusedId()})`);
  };
  const chips = (tool: string): Locator => page().locator(`#cond-${tool}-editor .chip-text`);
  const savedConditions = async (agentId: string): Promise<unknown> => {
    const { view } = await service().permissions('demo');
    return (view.agents.find((agent) => agent.agentId === agentId) as { conditions?: unknown } | undefined)?.conditions;
  };

  it('adds a condition by keyboard only, saves it, /decide applies it; removed, /decide allows again', async () => {
    expect((await service().decide('demo', 'DevFrontend', CARNET, { issueRef: '#90' })).allow).toBe(true);
    await openPanel();
    await target('DevFrontend').focus();
    await page().keyboard.press('Enter');
    await expect.poll(() => text(page().locator('#editor-title')), POLL).toContain('DevFrontend');

    const ids = (suffix: string): string => `cond-${CARNET}-${suffix}`;
    await tabTo(ids('toggle'));
    expect(
      await page()
        .locator(`#${ids('toggle')}`)
        .getAttribute('aria-expanded'),
    ).toBe('false');
    await page().keyboard.press('Enter');
    await expect.poll(focusedId, POLL).toBe(ids('add'));
    expect(
      await page()
        .locator(`#${ids('toggle')}`)
        .getAttribute('aria-expanded'),
    ).toBe('true');
    await page().keyboard.press('Enter');
    // The new condition starts on the catalog's first argument of the tool, operator « est l’une des valeurs ».
    await expect.poll(focusedId, POLL).toBe(ids('0-argument'));
    expect(
      await page()
        .locator(`#${ids('0-argument')}`)
        .inputValue(),
    ).toBe('issueRef');
    expect(await harness.status()).toContain('Nouvelle condition');
    await page().keyboard.press('Tab');
    expect(await focusedId()).toBe(ids('0-operator'));
    expect(
      await page()
        .locator(`#${ids('0-operator')}`)
        .inputValue(),
    ).toBe('in');
    await page().keyboard.press('Tab');
    expect(await focusedId()).toBe(ids('0-value'));
    await page().keyboard.type('82');
    await page().keyboard.press('Enter');
    await page().keyboard.type('90');
    await page().keyboard.press('Enter');
    await expect.poll(() => chips(CARNET).allInnerTexts(), POLL).toEqual(['#82', '#90']);
    expect(await harness.status()).toBe('#90 ajouté (issueRef, 2 valeurs).');
    // Backspace in the empty field takes the last chip back; the focus stays in the field.
    await page().keyboard.press('Backspace');
    await expect.poll(() => chips(CARNET).allInnerTexts(), POLL).toEqual(['#82']);
    expect(await focusedId()).toBe(ids('0-value'));
    expect(await harness.status()).toBe('#90 retiré (issueRef, 1 valeur).');
    expect(await description(CARNET)).toBe('Ajouté · seulement le ticket #82');

    await tabTo('save');
    await page().keyboard.press('Enter');
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    // The demo's own condition (DevFrontend may ask QA only) is kept beside the new one.
    expect(await savedConditions('DevFrontend')).toEqual({ ...DEMO_CONDITIONS, [CARNET]: { issueRef: { in: ['#82'] } } });
    const refused = await service().decide('demo', 'DevFrontend', CARNET, { issueRef: '#90' });
    expect(refused).toMatchObject({ allow: false, reason: 'argument_not_allowed', argument: 'issueRef' });
    expect((await service().decide('demo', 'DevFrontend', CARNET, { issueRef: 82 })).allow).toBe(true);

    // Removed by keyboard: back to the condition's « Retirer la condition », then Enregistrer.
    await tabTo(ids('0-remove'), 'Shift+Tab');
    await page().keyboard.press('Enter');
    await expect.poll(focusedId, POLL).toBe(ids('add'));
    expect(await description(CARNET)).toBe('Ajouté');
    await tabTo('save');
    await page().keyboard.press('Enter');
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await savedConditions('DevFrontend')).toEqual(DEMO_CONDITIONS);
    expect((await service().decide('demo', 'DevFrontend', CARNET, { issueRef: '#90' })).allow).toBe(true);
  });

  it('says the conditions of each row in French, an inherited one too', async () => {
    const conditions = {
      idea_ask_agent: { agentId: { in: ['QA', 'DevFrontend'] } },
      idea_run_in_background: { command: { prefix: ['npm test', 'npm run lint'] } },
      [CARNET]: { issueRef: { in: ['#82', '#90'] } },
      idea_context_propose: { target: { absent: true } },
    };
    const written = await service().admin('PUT', '/projects/demo/mcp-tool-permissions', {
      version: 1,
      projectDefault: { allowedTools: [...READ_TOOLS, ...Object.keys(conditions)], conditions },
    });
    expect(written.status).toBe(200);
    await openPanel();
    expect(await description('idea_ask_agent')).toBe('Autorisé · seulement pour les agents QA, DevFrontend');
    expect(await description('idea_run_in_background')).toBe('Autorisé · seulement les commandes npm test, npm run lint');
    expect(await description(CARNET)).toBe('Autorisé · seulement les tickets #82, #90');
    expect(await description('idea_context_propose')).toBe('Autorisé · seulement sans l’argument target');
    expect(
      await page()
        .getByRole('button', { name: /^Conditions : Déléguer une demande à un agent, idea_ask_agent, 1 condition$/ })
        .count(),
    ).toBe(1);
    // QA inherits: no button, the same words on its read-only row.
    await target('QA').click();
    await expect.poll(() => text(page().locator('#editor-title')), POLL).toContain('QA');
    expect(await page().locator('.tool-row', { hasText: 'idea_ask_agent' }).locator('.conditions-text').innerText()).toContain(
      'seulement pour les agents QA, DevFrontend',
    );
    expect(await page().locator(`#cond-idea_ask_agent-toggle`).count()).toBe(0);
  });

  it('counts in the preview the recent calls a narrowed condition would refuse, and says the argument in Refus récents', async () => {
    const policy = {
      allowedTools: [...READ_TOOLS, 'idea_ask_agent'],
      conditions: { idea_ask_agent: { agentId: { in: ['QA', 'Git'] } } },
    };
    const written = await service().admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', policy);
    expect(written.status).toBe(200);
    for (let call = 0; call < 2; call += 1) {
      expect((await service().decide('demo', 'DevFrontend', 'idea_ask_agent', { agentId: 'Git' })).allow).toBe(true);
    }
    expect(await service().decide('demo', 'DevFrontend', 'idea_ask_agent', { agentId: 'Main' })).toMatchObject({
      allow: false,
      reason: 'argument_not_allowed',
    });
    await openPanel();
    await target('DevFrontend').click();
    const denial = page().locator('#denials .denial', { hasText: 'idea_ask_agent' });
    await expect.poll(() => text(denial), POLL).toContain('argument agentId');

    // By mouse this time: « Voir les conditions » on the refusal opens the row's editor, then the chip Git's button.
    await denial.getByRole('button', { name: 'Voir les conditions : idea_ask_agent' }).click();
    await expect.poll(focusedId, POLL).toBe('cond-idea_ask_agent-0-value');
    await page().getByRole('button', { name: 'Retirer Git', exact: true }).click();
    await expect.poll(() => chips('idea_ask_agent').allInnerTexts(), POLL).toEqual(['QA']);
    expect(await focusedId()).toBe('cond-idea_ask_agent-0-chip-0');
    await expect
      .poll(() => text(page().locator('#draft-preview')), POLL)
      .toContain('Ce changement aurait refusé 2 appels récents : DevFrontend · idea_ask_agent ×2.');
    await page().locator('#save').click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect((await service().decide('demo', 'DevFrontend', 'idea_ask_agent', { agentId: 'Git' })).reason).toBe('argument_not_allowed');
  });

  it('keeps an incomplete condition in the draft and says why Enregistrer waits', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await page().locator(`#cond-${CARNET}-toggle`).click();
    await page().locator(`#cond-${CARNET}-add`).click();
    const blocking = page().locator('#conditions-incomplete');
    await expect.poll(() => text(blocking), POLL).toContain('Condition incomplète sur idea_ticket_update_carnet (issueRef)');
    expect(await page().locator('#save').getAttribute('aria-disabled')).toBe('true');
    expect(await page().locator('#save').getAttribute('aria-describedby')).toBe('conditions-incomplete');
    // A value that cannot be a ticket is refused where it was typed, and said.
    await page().locator(`#cond-${CARNET}-0-value`).fill('abc');
    await page().locator(`#cond-${CARNET}-0-value`).press('Enter');
    await expect.poll(() => harness.status(), POLL).toBe('Un ticket s’écrit #82 ou 82.');
    expect(await page().locator(`#cond-${CARNET}-0-value`).getAttribute('aria-invalid')).toBe('true');
    // Escape closes the editor, focus back on its button; the draft keeps the row.
    await page().locator(`#cond-${CARNET}-0-value`).press('Escape');
    await expect.poll(focusedId, POLL).toBe(`cond-${CARNET}-toggle`);
    expect(await text(page().locator(`#cond-${CARNET}-toggle`))).toBe('Conditions (1)');
    expect(await blocking.count()).toBe(1);
  });
});
