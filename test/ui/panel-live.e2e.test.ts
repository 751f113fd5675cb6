/**
 * Live updates in chromium against the real service: the panel follows
 * `GET /events`. Nothing in these tests clicks Actualiser: every change below reaches the page
 * by itself, through the events, or the test fails.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';
import { READ_TOOLS } from '../support/tools.js';

const harness = useBrowserHarness();

const DEV_FRONTEND = { agentId: 'DevFrontend', policy: { allowedTools: [...READ_TOOLS, 'idea_ticket_update_carnet'] } };
const GIT = { agentId: 'Git', policy: { allowedTools: ['idea_ticket_list'] } };

describe.skipIf(!browserTestsEnabled)('live updates from GET /events (chromium, real service)', { timeout: 30_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const memory = () => toolBox('Écrire la mémoire projet', 'idea_memory_write');
  const liveStatus = () => text(page().locator('#live-status'));
  /** Counts the requests of the page that are not the live stream, to prove nobody clicked. */
  const puts = (): string[] => {
    const seen: string[] = [];
    page().on('request', (request) => {
      if (request.method() === 'PUT') seen.push(request.headers()['if-match'] ?? '');
    });
    return seen;
  };

  it('updates the view by itself after an edit on disk and after a write through the API', async () => {
    await openPanel();
    await expect.poll(liveStatus, POLL).toBe('Suivi en direct');
    await target('DevFrontend').click();
    expect(await memory().isChecked()).toBe(false);
    await harness.editPolicyFile({
      version: 1,
      agents: [{ agentId: 'DevFrontend', policy: { allowedTools: [...READ_TOOLS, 'idea_memory_write'] } }],
    });
    await expect.poll(() => memory().isChecked(), POLL).toBe(true);
    expect(await text(page().locator('#state-idea_ticket_update_carnet'))).toBe('Refusé');
    expect(await text(target('Git'))).toContain('Hérité');

    const write = await service().admin('PUT', '/projects/demo/mcp-tool-permissions/agents/Git', { allowedTools: ['idea_ticket_list'] });
    expect(write.status).toBe(200);
    await expect.poll(() => text(target('Git')), POLL).toContain('Override');
    expect(await harness.status()).toContain('Permissions mises à jour');
    // The view on screen is the service's current revision: a save goes through without a conflict.
    const sent = puts();
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').uncheck();
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(sent).toEqual([`"${write.headers.get('etag')?.replace(/"/g, '')}"`]);
  });

  it('keeps a draft when the policy changes underneath, says so, and saves it on the new revision', async () => {
    await openPanel();
    await target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await memory().check();
    await harness.editPolicyFile({ version: 1, agents: [DEV_FRONTEND, GIT] });
    const afterEdit = (await service().permissions('demo')).etag;
    const notice = page().locator('#drift-notice');
    await expect.poll(() => notice.count(), POLL).toBe(1);
    expect(await text(notice)).toContain('La policy a été modifiée ailleurs pendant votre édition');
    expect(await text(notice)).toContain('« QA »');
    expect(await harness.status()).toContain('modifiée ailleurs pendant votre édition');
    expect(await memory().isChecked()).toBe(true); // the draft is intact
    expect(await page().locator('.dirty-note').count()).toBe(1);
    expect(await text(target('Git'))).toContain('Override'); // the rest of the view is current

    const sent = puts();
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(sent).toEqual([afterEdit]); // one PUT, with the revision the event brought
    expect(await notice.count()).toBe(0);
    expect(await service().decide('demo', 'QA', 'idea_memory_write')).toMatchObject({ allow: true, source: 'agent-override' });
    expect(await service().decide('demo', 'Git', 'idea_ticket_list')).toMatchObject({ allow: true, source: 'agent-override' });
  });

  it('shows both sides at once when the change underneath touches the edited target, before any save', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await memory().check();
    const sent = puts();
    const other = await service().admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', { allowedTools: READ_TOOLS });
    expect(other.status).toBe(200);
    const conflict = page().locator('#conflict');
    await expect.poll(() => conflict.count(), POLL).toBe(1);
    expect(await text(conflict)).toContain('« DevFrontend » a été modifié ailleurs');
    expect(await text(conflict.locator('.conflict-side').nth(1))).toContain('\u2212 idea_ticket_update_carnet');
    expect(await memory().isChecked()).toBe(true);
    expect(await page().locator('#drift-notice').count()).toBe(0); // the conflict says it, with the choices
    expect(sent).toEqual([]);
  });

  it('shows a file that breaks on disk at once, and clears the error when the file is repaired on disk', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await harness.editPolicyFile('{ "version": 1, "agents": [');
    const invalid = page().locator('#invalid-banner');
    await expect.poll(() => invalid.count(), POLL).toBe(1);
    expect(await text(invalid)).toContain('JSON mal formé');
    expect(await text(page().locator('.layout'))).not.toContain('Override');
    await harness.editPolicyFile({ version: 1, agents: [DEV_FRONTEND] });
    await expect.poll(() => invalid.count(), POLL).toBe(0);
    expect(await page().getByRole('alert').count()).toBe(0);
    expect(await text(target('DevFrontend'))).toContain('Override');
    expect(await text(page().locator('#editor-title'))).toContain('DevFrontend'); // still on the agent the user chose
  });

  it('keeps a draft through a broken file and its repair on disk', async () => {
    await openPanel();
    await target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await memory().check();
    await harness.editPolicyFile('{ "version": 1, "agents": [');
    const kept = page().locator('#repair-draft');
    await expect.poll(() => kept.count(), POLL).toBe(1);
    expect(await text(kept)).toContain('« QA » sont conservées');
    await harness.editPolicyFile({ version: 1, agents: [DEV_FRONTEND, GIT] });
    await expect.poll(() => page().locator('#invalid-banner').count(), POLL).toBe(0);
    expect(await memory().isChecked()).toBe(true);
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect((await service().decide('demo', 'QA', 'idea_memory_write')).allow).toBe(true);
  });

  it('follows projects added and removed, and says so when the open project goes away', async () => {
    const folder = path.join(service().projectsRoot, 'added-live');
    try {
      await openPanel();
      const options = () => page().locator('#project-select option').allInnerTexts();
      expect(await options()).not.toContain('added-live');
      await mkdir(path.join(folder, '.ideai'), { recursive: true });
      await writeFile(path.join(folder, '.ideai', 'agents.json'), JSON.stringify([{ id: 'Main' }]));
      await expect.poll(options, POLL).toContain('added-live');

      await page().locator('#project-select').selectOption('added-live');
      await expect.poll(() => text(target('Main')), POLL).toContain('Hérité');
      await rm(folder, { recursive: true, force: true });
      const notice = page().locator('#live-notice');
      await expect.poll(() => notice.count(), POLL).toBe(1);
      expect(await text(notice)).toContain('Le projet « added-live » n\u2019est plus servi par ce service');
      expect(await options()).not.toContain('added-live');
      expect(await page().locator('#project-select').inputValue()).not.toBe('added-live');
      expect(await page().getByRole('alert').count()).toBe(0);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('does not lose a click to a live re-render that lands between the press and the release', async () => {
    await openPanel();
    await target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await memory().check();
    const button = page().getByRole('button', { name: 'Enregistrer' });
    await button.scrollIntoViewIfNeeded();
    const save = await button.boundingBox();
    if (save === null) throw new Error('no Enregistrer button');
    await page().mouse.move(save.x + save.width / 2, save.y + save.height / 2);
    const reloaded = page().waitForResponse(
      (response) =>
        response.request().method() === 'GET' && new URL(response.url()).pathname.endsWith('/projects/demo/mcp-tool-permissions'),
    );
    await page().mouse.down();
    const write = await service().admin('PUT', '/projects/demo/mcp-tool-permissions/agents/Git', { allowedTools: ['idea_ticket_list'] });
    expect(write.status).toBe(200);
    // The event arrived and the page read the new view while the button is held down.
    await (await reloaded).finished();
    // A hesitant user (or a loaded machine) holds the press for seconds: the redraw still waits.
    await page().waitForTimeout(2000);
    await page().mouse.up();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await text(target('Git'))).toContain('Override');
    expect((await service().decide('demo', 'QA', 'idea_memory_write')).allow).toBe(true);
  });

  it('keeps the nodes and the focus through a live update elsewhere', async () => {
    await openPanel();
    await expect.poll(liveStatus, POLL).toBe('Suivi en direct');
    await target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await memory().check();
    const save = await page().getByRole('button', { name: 'Enregistrer' }).elementHandle();
    const box = await memory().elementHandle();
    await memory().focus();
    const write = await service().admin('PUT', '/projects/demo/mcp-tool-permissions/agents/Git', { allowedTools: ['idea_ticket_list'] });
    expect(write.status).toBe(200);
    await expect.poll(() => text(target('Git')), POLL).toContain('Override');
    // The same nodes are still in the page: a locator or a press taken before the update still holds.
    expect(await save.evaluate((node) => node.isConnected)).toBe(true);
    expect(await box.evaluate((node) => node.isConnected && node === document.activeElement)).toBe(true);
    expect(await memory().isChecked()).toBe(true);
  });

  it('reconnects after the stream is cut and catches up with what changed meanwhile', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await expect.poll(liveStatus, POLL).toBe('Suivi en direct');
    // Offline stops new connections (not the open one); the service then drops every connection.
    await page().context().setOffline(true);
    service().app.server.closeAllConnections();
    await expect.poll(liveStatus, POLL).toContain('interrompu');
    await harness.editPolicyFile({
      version: 1,
      agents: [{ agentId: 'DevFrontend', policy: { allowedTools: [...READ_TOOLS, 'idea_memory_write'] } }],
    });
    await page().waitForTimeout(300);
    expect(await memory().isChecked()).toBe(false); // nothing reached the page while offline
    await page().context().setOffline(false);
    await expect.poll(() => memory().isChecked(), { ...POLL, timeout: 20_000 }).toBe(true);
    expect(await liveStatus()).toBe('Suivi en direct');
  });
});
