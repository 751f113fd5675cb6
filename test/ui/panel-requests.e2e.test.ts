/**
 * Approvals in the panel in chromium against the real service: requests appear live behind the
 * header's "Demandes" button (the target column stays) and beside the agent's editor, and are
 * answered there (once, for a while, always, deny); temporary grants are listed and revoked, and
 * show as "Autorisé (temporaire)" in the rows; "Sur demande" is a toggle beside an unchecked tool. Each test uses its own agent and tool:
 * the service keeps requests, refusals and grants in memory across the tests of this file.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';
import { READ_TOOLS } from '../support/tools.js';

const harness = useBrowserHarness();

describe.skipIf(!browserTestsEnabled)('approvals in the panel (chromium, real service)', { timeout: 30_000 }, () => {
  const { openPanel, target, toolBox, askToggle, requestsButton } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const request = (agent: string, tool: string): Locator => page().locator('.request', { hasText: `${agent} veut appeler ${tool}` });
  const askFor = async (agentId: string, askTools: string[]): Promise<void> => {
    const put = await service().admin('PUT', `/projects/demo/mcp-tool-permissions/agents/${agentId}`, {
      allowedTools: READ_TOOLS,
      askTools,
    });
    expect(put.status).toBe(200);
  };

  it('shows a request live, and "Autoriser une fois" releases the waiting call and lets exactly the next call through', async () => {
    await askFor('QA', ['idea_memory_write']);
    await openPanel();
    // Exactly the ticket's two tabs; the requests are one header button away.
    expect(await page().getByRole('tab').allInnerTexts()).toEqual(['Système', 'Tools MCP IdeA']);
    expect(await requestsButton().getAttribute('aria-label')).toBe('Demandes d\u2019approbation, aucune en attente');
    await requestsButton().click();
    expect(await requestsButton().getAttribute('aria-expanded')).toBe('true');
    expect(await text(page().locator('#requests-panel'))).toContain('Aucune demande en attente.');
    expect(await page().getByRole('navigation', { name: 'Cibles' }).isVisible()).toBe(true); // the target column stays

    const asked = await service().decide('demo', 'QA', 'idea_memory_write');
    expect(asked).toMatchObject({ allow: false, reason: 'approval_required', approval: { status: 'pending' } });
    await expect.poll(() => request('QA', 'idea_memory_write').count(), POLL).toBe(1);
    expect(await text(request('QA', 'idea_memory_write'))).toContain('QA veut appeler idea_memory_write');
    expect(await text(request('QA', 'idea_memory_write'))).toMatch(/expire dans \d+ min \d\d s/);
    expect(await page().getByRole('button', { name: 'Demandes d\u2019approbation, 1 en attente' }).count()).toBe(1);
    expect(await text(requestsButton())).toMatch(/^Demandes\s*1$/);
    expect(await harness.status()).toContain('Nouvelle demande : QA veut appeler idea_memory_write');

    // A guarded call waits for the answer the way the guards do: a long-poll on the request.
    const id = (asked as { approval?: { id: string } }).approval?.id ?? '';
    const waiting = service()
      .admin('GET', `/projects/demo/approvals/${encodeURIComponent(id)}?waitSeconds=30`)
      .then(async (response) => ({ at: Date.now(), body: (await response.json()) as { status: string; answer?: string } }));
    await page().waitForTimeout(200); // the wait is open before the user answers
    const clicked = Date.now();
    await request('QA', 'idea_memory_write').getByRole('button', { name: 'Autoriser une fois' }).click();
    const answered = await waiting;
    expect(answered.body).toMatchObject({ status: 'approved', answer: 'once' });
    expect(answered.at - clicked).toBeLessThan(5000); // the waiting call is released by the click, not by its timeout
    await expect.poll(() => harness.status(), POLL).toBe('Demande de QA pour idea_memory_write autorisée une fois.');
    expect(await request('QA', 'idea_memory_write').count()).toBe(0);
    expect(await harness.focusedId()).toBe('requests-title'); // the list is empty: focus on its heading
    expect(await service().decide('demo', 'QA', 'idea_memory_write')).toMatchObject({ allow: true, source: 'approval' });
    // Once means once: the next call asks again, and the new request shows up by itself.
    expect(await service().decide('demo', 'QA', 'idea_memory_write')).toMatchObject({ allow: false, reason: 'approval_required' });
    await expect.poll(() => request('QA', 'idea_memory_write').count(), POLL).toBe(1);
  });

  it('grants for a while from "Autoriser pendant…", shows the grant with its remaining time, and "Retirer" ends it', async () => {
    await askFor('Git', ['idea_ticket_update_carnet']);
    await openPanel();
    await requestsButton().click();
    await service().decide('demo', 'Git', 'idea_ticket_update_carnet');
    const pending = request('Git', 'idea_ticket_update_carnet');
    await expect.poll(() => pending.count(), POLL).toBe(1);
    const durations = pending.getByRole('button', { name: 'Autoriser pendant…' });
    await durations.click();
    expect(await durations.getAttribute('aria-expanded')).toBe('true');
    expect(await page().evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Autoriser pendant 15 minutes');
    await page().keyboard.press('Escape'); // closes the choices, focus back on the button
    expect(await durations.getAttribute('aria-expanded')).toBe('false');
    expect(await page().evaluate(() => document.activeElement?.textContent)).toBe('Autoriser pendant…');
    await durations.click();
    await pending.getByRole('button', { name: 'Autoriser pendant 1 heure' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Demande de Git pour idea_ticket_update_carnet autorisée pendant 1 heure.');

    const grant = page().locator('.grant', { hasText: 'idea_ticket_update_carnet' });
    expect(await text(grant)).toMatch(/Git : idea_ticket_update_carnet\s+reste (59 min \d\d s|1 h 00 min)/);
    expect(await service().decide('demo', 'Git', 'idea_ticket_update_carnet')).toMatchObject({ allow: true, source: 'grant' });
    // The remaining time counts down in place.
    const left = grant.locator('.until');
    const first = await text(left);
    await expect.poll(() => text(left), { ...POLL, timeout: 3000 }).not.toBe(first);

    // The agent's tool row says the tool is allowed (for a while), and the summary counts it.
    await target('Git').click();
    expect(await text(page().locator('#state-idea_ticket_update_carnet'))).toMatch(
      /^Autorisé \(temporaire\), encore (59 min \d\d s|1 h 00 min)$/,
    );
    expect(await text(page().locator('#summary'))).toBe('9 lecture autorisés · 1 écriture autorisé (dont 1 temporaire)');
    expect(await toolBox("Modifier le carnet d'un ticket", 'idea_ticket_update_carnet').isChecked()).toBe(false); // the policy itself does not allow it

    await requestsButton().click();
    await grant.getByRole('button', { name: /^Retirer l’accord temporaire de Git/ }).click();
    await expect.poll(() => harness.status(), POLL).toContain('Accord temporaire de Git retiré');
    expect(await page().locator('.grant', { hasText: 'idea_ticket_update_carnet' }).count()).toBe(0);
    expect(await service().decide('demo', 'Git', 'idea_ticket_update_carnet')).toMatchObject({ allow: false, reason: 'approval_required' });
  });

  it('writes the tool into the agent\u2019s allowed tools on "Toujours autoriser", and refuses on "Refuser"', async () => {
    await askFor('Main', ['idea_create_skill', 'idea_workstate_set']);
    await openPanel();
    await target('Main').click();
    expect(await text(page().locator('#state-idea_create_skill'))).toBe('Sur demande');
    expect(await askToggle('Créer un skill', 'idea_create_skill').getAttribute('aria-pressed')).toBe('true');
    await service().decide('demo', 'Main', 'idea_create_skill');
    await service().decide('demo', 'Main', 'idea_workstate_set');
    // Requests of the earlier tests may still be pending: count Main's only. They are answered beside Main's editor.
    await expect
      .poll(() => text(page().locator('#agent-requests')), POLL)
      .toContain('2 demandes d\u2019approbation en attente pour cet agent');
    expect(await requestsButton().getAttribute('aria-label')).toMatch(/^Demandes d’approbation, \d+ en attente$/);
    expect(await page().locator('#editor-title').isVisible()).toBe(true);

    await request('Main', 'idea_create_skill').getByRole('button', { name: 'Toujours autoriser' }).click();
    await expect.poll(() => harness.status(), POLL).toContain('idea_create_skill ajouté aux tools autorisés de Main');
    expect(await harness.focusedId()).toMatch(/^approve-once-/); // on the next request
    expect(await service().decide('demo', 'Main', 'idea_create_skill')).toMatchObject({ allow: true, source: 'agent-override' });

    await request('Main', 'idea_workstate_set').getByRole('button', { name: 'Refuser' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Demande de Main pour idea_workstate_set refusée.');
    // A refusal is said in the error style, not as a success.
    // Polled: a live refresh may re-render the notice between two reads (a detached node has no style).
    const notice = page().locator('#requests-notice');
    await expect.poll(() => notice.getAttribute('class'), POLL).toContain('status-refusal');
    await expect
      .poll(() => notice.evaluate((element) => (element.isConnected ? getComputedStyle(element).color : 'detached')), POLL)
      .toBe('rgb(179, 38, 30)');
    expect(await service().decide('demo', 'Main', 'idea_workstate_set')).toMatchObject({ allow: false, reason: 'approval_denied' });

    // The durable answer reached the editor through the live policy event.
    await expect.poll(() => text(page().locator('#state-idea_create_skill')), POLL).toBe('Ajouté');
    expect(await toolBox('Créer un skill', 'idea_create_skill').isChecked()).toBe(true);
  });

  it('puts tools on "Sur demande" with the toggle beside an unchecked row; checking clears it; the next /decide asks', async () => {
    await openPanel();
    await target('Architect').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    const ask = askToggle('Déléguer une demande à un agent', 'idea_ask_agent');
    expect(await ask.getAttribute('aria-pressed')).toBe('false');
    await ask.click();
    expect(await ask.getAttribute('aria-pressed')).toBe('true');
    expect(await text(page().locator('#state-idea_ask_agent'))).toBe('Sur demande');
    // Checking the box clears the ask (and the toggle goes: it is offered beside an unchecked tool only).
    await toolBox('Déléguer une demande à un agent', 'idea_ask_agent').check();
    expect(await ask.count()).toBe(0);
    await toolBox('Déléguer une demande à un agent', 'idea_ask_agent').uncheck();
    await ask.click();
    await askToggle('Écrire la mémoire projet', 'idea_memory_write').click();
    const quick = page().getByRole('group', { name: 'Accord rapide' });
    expect(await text(page().locator('#summary'))).toBe('9 lecture autorisés · 0 écriture autorisé · 2 sur demande');
    expect(await text(quick)).toContain('Sur demande');
    expect(
      await page()
        .getByRole('button', { name: /^Délégation agents, 0 sur 3 autorisé, 1 sur demande/ })
        .count(),
    ).toBe(1);
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');

    const file = JSON.parse(await readFile(path.join(service().projectsRoot, 'demo', '.ideai', 'mcp-tool-permissions.json'), 'utf8')) as {
      agents: { agentId: string; policy: { allowedTools: string[]; askTools?: string[] } }[];
    };
    expect(file.agents.find((agent) => agent.agentId === 'Architect')?.policy.askTools).toEqual(['idea_ask_agent', 'idea_memory_write']);
    expect(await service().decide('demo', 'Architect', 'idea_ask_agent')).toMatchObject({ allow: false, reason: 'approval_required' });
    expect(await service().decide('demo', 'Architect', 'idea_memory_write')).toMatchObject({ allow: false, reason: 'approval_required' });

    // Toggle off: askTools leaves the file, and the call is a plain refusal again.
    // The save closes the request the decide above opened: the closure is said after the save, never instead of it.
    await ask.click();
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toMatch(/^Permissions enregistrées/);
    expect(await service().decide('demo', 'Architect', 'idea_ask_agent')).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
  });

  it('lets a reader without the admin token see the requests but not answer them', async () => {
    await askFor('DevFrontend', ['idea_memory_write']);
    await service().decide('demo', 'DevFrontend', 'idea_memory_write');
    await openPanel(null);
    await requestsButton().click();
    const pending = request('DevFrontend', 'idea_memory_write');
    await expect.poll(() => pending.count(), POLL).toBe(1);
    expect(await text(page().locator('#requests-panel'))).toContain('Répondre demande le jeton administrateur.');
    const once = pending.getByRole('button', { name: 'Autoriser une fois' });
    expect(await once.getAttribute('aria-disabled')).toBe('true');
    const posts: string[] = [];
    page().on('request', (sent) => {
      if (sent.method() === 'POST') posts.push(sent.url());
    });
    await once.click({ force: true }); // a user can still click it: nothing may happen
    await page().waitForTimeout(200);
    expect(posts).toEqual([]);
    expect(await service().decide('demo', 'DevFrontend', 'idea_memory_write')).toMatchObject({ reason: 'approval_required' });
  });

  it('says why a request beside the editor closed without this page: answered in the agent\u2019s window, or its tool left ask', async () => {
    await askFor('Architect', ['idea_run_in_background', 'idea_launch_agent']);
    await openPanel();
    await target('Architect').click();
    const notice = page().locator('#requests-notice');
    const asked = await service().decide('demo', 'Architect', 'idea_run_in_background');
    const id = (asked as { approval?: { id: string } }).approval?.id ?? '';
    await expect.poll(() => request('Architect', 'idea_run_in_background').count(), POLL).toBe(1);

    // The user answered in their MCP host's form (the guard posts it with `via`).
    const answered = await service().admin('POST', `/projects/demo/approvals/${encodeURIComponent(id)}`, {
      answer: 'once',
      via: 'elicitation',
    });
    expect(answered.status).toBe(200);
    await expect
      .poll(() => text(notice), POLL)
      .toBe('Demande de Architect pour idea_run_in_background autorisée une fois dans la fenêtre de l\u2019agent.');
    expect(await request('Architect', 'idea_run_in_background').count()).toBe(0);
    expect(await notice.getAttribute('class')).not.toContain('status-refusal');

    // Someone takes the tool off ask: its pending request closes (policy_changed) and the page says so.
    await service().decide('demo', 'Architect', 'idea_launch_agent');
    await expect.poll(() => request('Architect', 'idea_launch_agent').count(), POLL).toBe(1);
    await askFor('Architect', ['idea_run_in_background']);
    await expect
      .poll(() => text(notice), POLL)
      .toBe('Demande de Architect pour idea_launch_agent fermée : ce tool n\u2019est plus « Sur demande » pour Architect.');
    expect(await request('Architect', 'idea_launch_agent').count()).toBe(0);
    expect(await page().getByRole('alert').count()).toBe(0);
  });
  it('shows a ticket written with bidirectional controls with them escaped: "\\u202e28\\u202c" never reads as #82', async () => {
    const bidi = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
    await askFor('Git', ['idea_ticket_link']);
    await openPanel();
    await requestsButton().click();
    await service().decide('demo', 'Git', 'idea_ticket_link', { issueRef: '\u202e28\u202c' });
    const pending = request('Git', 'idea_ticket_link');
    await expect.poll(() => pending.count(), POLL).toBe(1);
    expect(await text(pending)).toContain('ticket #\\u202e28\\u202c · ');
    expect(await page().locator('body').innerText()).not.toMatch(bidi);
    expect(await page().locator('body').textContent()).not.toMatch(bidi);
    expect(await harness.status()).not.toMatch(bidi);
  });
});
