/**
 * The permissions panel in a real browser (Debian's chromium via playwright-core) against the
 * real service: the two main journeys with the next /decide, the dirty-draft protection, the
 * 412 path, keyboard-only use, and the states of the ticket (read-only, unknown tools, errors).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildUi } from '../../ui/build.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { ADMIN_TOKEN, DEMO_PROJECTS, startService, type RunningService } from './service.js';

const POLL = { timeout: 5000, interval: 25 };
let browser: Browser;
let service: RunningService;
let demoDocument: unknown;
let context: BrowserContext;
let page: Page;

/** Opens the panel; with `token`, gives it through the token form as a user would. */
async function openPanel(token: string | null = ADMIN_TOKEN): Promise<void> {
  await page.goto(`${service.baseUrl}/ui/`);
  await page.locator('#token-input').waitFor();
  if (token === null) await page.getByRole('button', { name: 'Continuer en lecture seule' }).click();
  else {
    await page.getByLabel('Jeton', { exact: true }).fill(token);
    await page.getByRole('button', { name: 'Utiliser ce jeton' }).click();
  }
  await page.getByRole('button', { name: /^Défaut projet/ }).waitFor();
}

const target = (name: string): Locator => page.getByRole('navigation', { name: 'Cibles' }).getByRole('button', { name: new RegExp(`^${name}\\b`) });
const toolBox = (label: string, name: string): Locator => page.getByRole('checkbox', { name: `${label}, ${name}`, exact: true });
const text = (locator: Locator): Promise<string> => locator.innerText();

beforeAll(async () => {
  if (!chromiumAvailable()) return;
  await buildUi();
  browser = await launchChromium();
  service = await startService();
  demoDocument = JSON.parse(await readFile(path.join(DEMO_PROJECTS, 'demo', '.ideai', 'mcp-tool-permissions.json'), 'utf8'));
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

beforeEach(async () => {
  if (!chromiumAvailable()) return;
  // Every test starts from the demo policy (DevFrontend: read tools + idea_ticket_update_carnet).
  const reset = await service.admin('PUT', '/projects/demo/mcp-tool-permissions', demoDocument);
  expect(reset.status).toBe(200);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'fr-FR' });
  context.setDefaultTimeout(5000); // a failing wait reports itself well before the test timeout
  page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
});

afterEach(async () => {
  await context?.close();
});

describe.skipIf(!chromiumAvailable())('permissions panel (chromium, real service)', { timeout: 20_000 }, () => {
  it('grants a write tool to one agent: create an override, tick, save; the next /decide allows it', async () => {
    expect((await service.decide('demo', 'QA', 'idea_ticket_update_carnet')).allow).toBe(false);
    await openPanel();
    await page.getByRole('tab', { name: 'Tools MCP IdeA' }).click();
    await target('QA').click();
    await expect.poll(() => text(page.locator('.mode'))).toContain('Hérite du défaut projet');
    expect(await page.getByRole('checkbox').count()).toBe(0); // read-only until "Créer un override"
    expect(await text(target('QA'))).toContain('Hérité');

    await page.getByRole('button', { name: 'Créer un override' }).click();
    const carnet = toolBox("Modifier le carnet d'un ticket", 'idea_ticket_update_carnet');
    await carnet.check();
    expect(await text(page.locator('#summary'))).toBe('9 lecture autorisés · 1 écriture autorisé');
    expect(await page.getByRole('button', { name: 'Tickets, 1 sur 7 autorisé' }).getAttribute('aria-expanded')).toBe('true');
    expect(await text(page.locator('.actions'))).toContain('Modifications non enregistrées');
    expect((await service.decide('demo', 'QA', 'idea_ticket_update_carnet')).allow).toBe(false); // not saved yet

    await page.getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page.getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await text(target('QA'))).toContain('Override');
    expect(await text(page.locator('#state-idea_ticket_update_carnet'))).toBe('Ajouté');
    const decision = await service.decide('demo', 'QA', 'idea_ticket_update_carnet');
    expect(decision).toMatchObject({ allow: true, source: 'agent-override' });
    expect((await service.decide('demo', 'QA', 'idea_memory_write')).allow).toBe(false);
    // The feedback goes away after about 2 s.
    await expect.poll(() => text(page.getByRole('status')), POLL).toBe('');
  });

  it('withdraws a write tool: untick, save; the next /decide denies it, then offers to delete the useless override', async () => {
    expect((await service.decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(true);
    await openPanel();
    await target('DevFrontend').click();
    expect(await text(page.locator('.mode'))).toContain('Override personnalisé');
    const carnet = toolBox("Modifier le carnet d'un ticket", 'idea_ticket_update_carnet');
    expect(await carnet.isChecked()).toBe(true);
    await carnet.uncheck();
    expect(await page.getByRole('button', { name: 'Tickets, 0 sur 7 autorisé' }).count()).toBe(1);
    expect(await text(page.locator('#summary'))).toBe('9 lecture autorisés · 0 écriture autorisé');
    await page.getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page.getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await service.decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).toMatchObject({ allow: false, reason: 'not_in_allowlist' });

    // The override now equals the default: never deleted silently, offered instead.
    const cleanup = page.getByRole('button', { name: 'Supprimer l\u2019override inutile' });
    await cleanup.click();
    await expect.poll(async () => (await service.permissions('demo')).view.agents.find((agent) => agent.agentId === 'DevFrontend')?.mode, POLL).toBe('inherit');
    await expect.poll(() => text(target('DevFrontend'))).toContain('Hérité');
  });

  it('protects a dirty draft when the user switches target, and keeps it on "Continuer l\u2019édition"', async () => {
    await openPanel();
    await target('QA').click();
    await page.getByRole('button', { name: 'Créer un override' }).click();
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').check();
    await target('Main').click();
    const dialog = page.getByRole('alertdialog');
    expect(await text(dialog)).toContain('Modifications non enregistrées pour « QA »');
    await page.getByRole('button', { name: 'Continuer l\u2019édition' }).click();
    expect(await dialog.count()).toBe(0);
    expect(await text(page.locator('#editor-title'))).toContain('QA');
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);

    await page.getByRole('button', { name: 'Actualiser' }).click(); // refresh is guarded too
    await page.getByRole('button', { name: 'Abandonner les modifications' }).click();
    await target('Main').click();
    expect(await text(page.locator('#editor-title'))).toContain('Main');
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect((await service.permissions('demo')).view.agents.find((agent) => agent.agentId === 'QA')?.mode).toBe('inherit');
  });

  it('sends If-Match and, on 412, says someone else changed the policy, keeps the draft and offers to reload', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').check();
    // Someone else changes the policy behind the page's back.
    const other = await service.admin('PUT', `/projects/demo/mcp-tool-permissions/agents/${encodeURIComponent('Git')}`, {
      allowedTools: ['idea_list_agents', 'idea_ticket_list'],
    });
    expect(other.status).toBe(200);
    const requests: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT') requests.push(request.headers()['if-match'] ?? '');
    });
    await page.getByRole('button', { name: 'Enregistrer' }).click();
    const error = page.locator('#save-error');
    await expect.poll(() => error.count(), POLL).toBe(1);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatch(/^"[^"]+"$/);
    expect(await text(error)).toContain("Quelqu'un d'autre a modifié cette policy");
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true); // draft intact
    expect(await text(page.locator('.actions'))).toContain('Modifications non enregistrées');
    expect((await service.decide('demo', 'DevFrontend', 'idea_memory_write')).allow).toBe(false); // nothing written

    await page.getByRole('button', { name: 'Recharger' }).click();
    await expect.poll(() => text(target('Git')), POLL).toContain('Override');
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(false);
    expect(await page.locator('.dirty-note').count()).toBe(0);
  });

  it('asks for an inline confirmation before a write tool is granted on the project default', async () => {
    await openPanel();
    await target('Défaut projet').click();
    expect(await page.getByRole('button', { name: /^Lecture projet, 5 sur 5/ }).getAttribute('aria-expanded')).toBe('true');
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').click();
    const confirm = page.locator('.inline-confirm');
    expect(await text(confirm)).toContain('Ce tool sera autorisé pour tous les agents sans override. Confirmer cette modification ?');
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(false);
    await confirm.getByRole('button', { name: 'Confirmer' }).click();
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page.getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await service.decide('demo', 'Main', 'idea_memory_write')).toMatchObject({ allow: true, source: 'project-default' });
    // DevFrontend has an override without it.
    expect((await service.decide('demo', 'DevFrontend', 'idea_memory_write')).allow).toBe(false);
  });

  it('works with the keyboard only: tabs with arrows, targets, override, checkbox and save', async () => {
    await page.goto(`${service.baseUrl}/ui/`);
    await page.locator('#token-input').waitFor();
    const focusedId = (): Promise<string> => page.evaluate(() => document.activeElement?.id ?? '');
    const tabTo = async (id: string): Promise<void> => {
      for (let step = 0; step < 80; step += 1) {
        if ((await focusedId()) === id) return;
        await page.keyboard.press('Tab');
      }
      throw new Error(`never reached #${id} with Tab (focus on #${await focusedId()})`);
    };
    await tabTo('token-input');
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('#target-default').waitFor();

    await tabTo('tab-mcp');
    await page.keyboard.press('ArrowLeft');
    expect(await focusedId()).toBe('tab-system');
    expect(await page.getByRole('tab', { name: 'Système' }).getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('#panel-mcp').isHidden()).toBe(true);
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Tools MCP IdeA' }).getAttribute('aria-selected')).toBe('true');
    // Visible focus on the tab.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle)).not.toBe('none');

    await tabTo('target-agent-QA');
    await page.keyboard.press('Enter');
    await tabTo('create-override');
    await page.keyboard.press('Enter');
    await tabTo('tool-idea_ask_agent');
    await page.keyboard.press('Space');
    expect(await toolBox('Déléguer une demande à un agent', 'idea_ask_agent').isChecked()).toBe(true);
    await tabTo('save');
    await page.keyboard.press('Enter');
    await expect.poll(() => text(page.getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await service.decide('demo', 'QA', 'idea_ask_agent')).toMatchObject({ allow: true, source: 'agent-override' });
  });

  it('is read-only without a token: no checkbox, no save', async () => {
    await openPanel(null);
    await target('DevFrontend').click();
    expect(await text(page.locator('#summary'))).toBe('9 lecture autorisés · 1 écriture autorisé');
    expect(await page.getByRole('checkbox').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Enregistrer' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Réinitialiser l\u2019override' }).count()).toBe(0);
    expect(await text(page.locator('#state-idea_ticket_update_carnet'))).toBe('Ajouté');
  });

  it('shows unknown tools in their own group and never saves them back', async () => {
    // A hand edit of the file (the API refuses unknown names): the watcher picks it up.
    const document = { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_list_agents', 'idea_retired_tool'] } }] };
    await writeFile(path.join(service.projectsRoot, 'demo', '.ideai', 'mcp-tool-permissions.json'), JSON.stringify(document));
    await expect
      .poll(async () => (await service.permissions('demo')).view.agents.find((agent) => agent.agentId === 'QA')?.unknownTools, POLL)
      .toEqual(['idea_retired_tool']);
    await openPanel();
    await target('QA').click();
    const unknown = page.getByRole('region', { name: 'Tools inconnus' });
    expect(await text(unknown)).toContain('idea_retired_tool');
    expect(await text(unknown)).toContain('Inconnu');
    expect(await text(unknown)).toContain('ne seront pas ré-enregistrés');
    const bodies: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT') bodies.push(request.postData() ?? '');
    });
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').check();
    await page.getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page.getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(JSON.parse(bodies[0] ?? '{}')).toEqual({ allowedTools: ['idea_list_agents', 'idea_memory_write'] });
    expect(await page.getByRole('region', { name: 'Tools inconnus' }).count()).toBe(0);
  });

  it('shows a load error with "Réessayer", a project selector, and the empty state of a project without agents', async () => {
    // A project folder added while the service runs appears without a restart.
    await mkdir(path.join(service.projectsRoot, 'empty'), { recursive: true });
    await expect.poll(async () => (await (await service.admin('GET', '/projects')).json()) as unknown, POLL).toMatchObject({
      projects: [{ id: 'demo' }, { id: 'empty' }, { id: 'sandbox' }],
    });
    let failures = 1;
    await page.route('**/catalog', async (route) => {
      if (failures-- > 0) await route.abort('connectionrefused');
      else await route.continue();
    });
    await page.goto(`${service.baseUrl}/ui/`);
    await page.getByRole('button', { name: 'Continuer en lecture seule' }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => text(alert), POLL).toContain('Impossible de charger les permissions');
    await page.getByRole('button', { name: 'Réessayer' }).click();
    await target('Défaut projet').waitFor();

    const selector = page.getByLabel('Projet', { exact: true });
    expect(await selector.locator('option').allInnerTexts()).toEqual(['demo', 'empty', 'sandbox']);
    await selector.selectOption('empty');
    await expect.poll(() => text(page.getByRole('navigation', { name: 'Cibles' })), POLL).toContain('Aucun agent dans ce projet.');
  });
});

describe.skipIf(!chromiumAvailable())('permissions panel with PDP_DECIDE_TOKEN', { timeout: 20_000 }, () => {
  it('asks for a token when a GET answers 401, then loads with it', async () => {
    const guarded = await startService({ decideToken: 'ui-test-decide-token' });
    try {
      await page.goto(`${guarded.baseUrl}/ui/`);
      const form = page.locator('form.token-form');
      await expect.poll(() => text(form), POLL).toContain('Un jeton est nécessaire pour lire les permissions');
      await page.getByLabel('Jeton', { exact: true }).fill('ui-test-decide-token');
      await page.getByRole('button', { name: 'Utiliser ce jeton' }).click();
      await target('DevFrontend').waitFor();
      expect(await text(target('DevFrontend'))).toContain('Override');
    } finally {
      await guarded.close();
    }
  });
});
