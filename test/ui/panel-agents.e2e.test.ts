/**
 * Agents and the keyboard: the id `/decide` uses
 * beside the name, warnings for duplicate names and invisible or lookalike characters, "Accord
 * rapide", and group actions that no longer cost Tab presses on every pass.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';

const harness = useBrowserHarness();

/** Measured with this layout (see docs/ui.md, Keyboard); a regression that adds Tab stops fails here. */
const TAB_TO_MEMORY_WRITE = 22;
const TAB_TO_SAVE = 48;

describe.skipIf(!browserTestsEnabled)('panel agents and keyboard (chromium, real service)', { timeout: 30_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;

  it('shows the id /decide uses beside the name (sandbox: QA is "Quality")', async () => {
    await openPanel();
    await page().getByLabel('Projet', { exact: true }).selectOption('sandbox');
    const quality = page()
      .getByRole('navigation', { name: 'Cibles' })
      .getByRole('button', { name: /^Quality/ });
    await expect.poll(() => text(quality), POLL).toMatch(/^Quality \(id QA\)/);
    await quality.click();
    expect(await text(page().locator('#editor-title'))).toBe('Tools MCP IdeA — Quality (id QA)');
  });

  it('flags duplicate names, invisible and lookalike characters, and offers no override for a misleading id', async () => {
    const agents = [
      { id: 'QA', name: 'QA' },
      { id: 'Release', name: 'QA' },
      { id: 'QA\u200b', name: 'QA\u200b' },
      { id: '\uff31\uff21', name: '\uff31\uff21' },
    ];
    const file = path.join(service().projectsRoot, 'demo', '.ideai', 'agents.json');
    const declared = await readFile(file, 'utf8');
    onTestFinished(async () => {
      await writeFile(file, declared);
      await expect.poll(async () => (await service().permissions('demo')).view.agents.length, POLL).toBe(5);
    });
    await writeFile(file, JSON.stringify({ agents }));
    await expect.poll(async () => (await service().permissions('demo')).view.agents.length, POLL).toBe(5);
    await openPanel();
    const targets = page().getByRole('navigation', { name: 'Cibles' });
    const release = targets.getByRole('button', { name: /^QA \(id Release\)/ });
    expect(await text(release)).toContain('Nom en double : « QA » désigne aussi l\u2019agent QA');
    const invisible = targets.getByRole('button', { name: /\(id QA⟨U\+200B⟩\)/ });
    expect(await text(invisible)).toContain('Caractère invisible dans l\u2019identifiant (U+200B)');
    const fullwidth = targets.getByRole('button', { name: /^ＱＡ/ });
    expect(await text(fullwidth)).toContain('Caractères trompeurs dans l\u2019identifiant (U+FF31 U+FF21) : se lit « QA »');

    // The service counts a file holding such an id invalid: the panel never writes one.
    await invisible.click();
    expect(await text(page().locator('#agent-warning'))).toContain('c\u2019est lui que /decide reçoit');
    expect(await text(page().locator('#override-refusal'))).toContain('Aucun override possible pour cet agent : Caractère invisible');
    expect(await page().getByRole('button', { name: 'Créer un override', exact: true }).count()).toBe(0);
    expect(await page().getByRole('group', { name: 'Accord rapide' }).getByRole('checkbox', { disabled: false }).count()).toBe(0);
    await fullwidth.click();
    expect(await page().getByRole('button', { name: 'Créer un override', exact: true }).count()).toBe(0);
    await release.click();
    expect(await page().getByRole('button', { name: 'Créer un override', exact: true }).count()).toBe(1); // a duplicate name is only a warning
  });

  it('shows "Accord rapide" read-only until Créer un override, then grants a whole bundle with one box', async () => {
    await openPanel();
    await target('DevFrontend').click();
    const quick = page().getByRole('group', { name: 'Accord rapide' });
    const tickets = quick.getByRole('checkbox', { name: 'Modifier les tickets' });
    // A mixed bundle says so in words (the box alone could not): DevFrontend has idea_ticket_update_carnet only.
    expect(await text(quick)).toContain('Partiel : 1 sur 4');
    expect(await tickets.isChecked()).toBe(false);
    expect(await tickets.evaluate((box) => (box as HTMLInputElement).indeterminate)).toBe(true);

    // An agent that inherits: the boxes are shown, attenuated and read-only; a click changes nothing.
    await target('QA').click();
    const memory = quick.getByRole('checkbox', { name: 'Écrire la mémoire' });
    expect(await memory.isDisabled()).toBe(true);
    expect(await text(quick)).toContain('Hérité du défaut projet : « Créer un override » pour modifier.');
    expect(
      Number(
        await page()
          .locator('.quick-check-row')
          .first()
          .evaluate((row) => getComputedStyle(row).opacity),
      ),
    ).toBeLessThan(1);
    await memory.click({ force: true });
    expect(await text(page().locator('.mode'))).toContain('Hérite du défaut projet');
    expect(await page().locator('.actions').count()).toBe(0); // no draft, nothing to save

    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await memory.check();
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);
    await tickets.check();
    expect(await text(page().locator('#summary'))).toBe('9 lecture autorisés · 5 écriture autorisés');
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect((await service().decide('demo', 'QA', 'idea_memory_write')).allow).toBe(true);
    expect((await service().decide('demo', 'QA', 'idea_ticket_update_status')).allow).toBe(true);
    expect((await service().decide('demo', 'QA', 'idea_ticket_create')).allow).toBe(false);
    expect(await text(quick)).toContain('Accordé');
    // Unticking a bundle withdraws all of it.
    await tickets.uncheck();
    expect(await text(page().locator('#summary'))).toBe('9 lecture autorisés · 1 écriture autorisé');
  });

  it('puts each group\u2019s actions one arrow away: one Tab stop per group (Tab presses measured)', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await toolBox('Déléguer une demande à un agent', 'idea_ask_agent').check();
    const presses = async (goal: string): Promise<number> => {
      await page().locator('#target-agent-DevFrontend').focus();
      for (let count = 1; count <= 80; count += 1) {
        await page().keyboard.press('Tab');
        if ((await harness.focusedId()).startsWith(goal)) return count;
      }
      throw new Error(`never reached #${goal}`);
    };
    const toMemoryWrite = await presses('tool-idea_memory_write'); // the row's checkbox
    const toSave = await presses('save');
    // One stop per group (its toolbar), one per checkbox, one per "Sur demande" toggle of an unchecked write tool,
    // one per « Conditions » button of a checked tool (idea_ask_agent, idea_ticket_update_carnet).
    expect(toMemoryWrite).toBeLessThanOrEqual(TAB_TO_MEMORY_WRITE);
    expect(toSave).toBeLessThanOrEqual(TAB_TO_SAVE);

    // The actions are in a toolbar: arrows reach them, Enter runs them.
    await page().locator('#group-toggle-tickets').focus();
    await page().keyboard.press('ArrowRight');
    expect(await harness.focusedId()).toBe('group-all-tickets');
    expect(await page().getByRole('toolbar', { name: 'Groupe Tickets' }).count()).toBe(1);
    await page().keyboard.press('Enter');
    expect(await page().getByRole('button', { name: 'Tickets, 7 sur 7 autorisés' }).count()).toBe(1);
    await page().keyboard.press('ArrowRight');
    expect(await harness.focusedId()).toBe('group-none-tickets');
    await page().keyboard.press('ArrowRight');
    expect(await harness.focusedId()).toBe('group-more-tickets');
    // "Tout demander" lives behind "Autres actions"; the visible actions are the ticket's two.
    await page().keyboard.press('Enter');
    expect(await harness.focusedId()).toBe('group-ask-tickets');
    expect(await page().getByRole('button', { name: 'Tout demander dans ce groupe (Tickets)' }).count()).toBe(1);
    await page().keyboard.press('Enter');
    expect(await page().getByRole('button', { name: 'Tickets, 0 sur 7 autorisé, 7 sur demande' }).count()).toBe(1);
    expect(await page().getByRole('button', { name: 'Tout demander dans ce groupe (Tickets)' }).count()).toBe(0);
    await page().locator('#group-more-tickets').focus();
    await page().keyboard.press('ArrowRight'); // wraps to the group button
    expect(await harness.focusedId()).toBe('group-toggle-tickets');
  });
});
