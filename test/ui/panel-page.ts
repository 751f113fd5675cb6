/**
 * Shared set-up of the browser suites: Debian's chromium through playwright-core, the real service
 * (`buildApp` on a loopback port over a temp copy of the demo projects), one fresh browser context
 * per test, and the demo policy restored before each test.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { buildUi } from '../../ui/build.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { ADMIN_TOKEN, DEMO_PROJECTS, startService, type RunningService } from './demo-service.js';

export const POLL = { timeout: 5000, interval: 25 };

/** True when the suites run: chromium is there, or CI is set (then a missing chromium fails). */
export const browserTestsEnabled = chromiumAvailable();

export interface Harness {
  readonly service: RunningService;
  readonly page: Page;
  /**
   * Opens the panel; with a token, gives it through the token form as a user would. `live: false`
   * cuts `GET /events` off, for the tests of what a save finds when no event came first.
   */
  openPanel: (token?: string | null, options?: { live?: boolean }) => Promise<void>;
  /** The button of a target ("Défaut projet" or an agent name) in the target column. */
  target: (name: string) => Locator;
  /** The checkbox of a tool row (checked = Autorisé), found by its full accessible name "<libellé>, <tool>". */
  toolBox: (label: string, name: string) => Locator;
  /** The "Sur demande" toggle beside an unchecked tool ("Sur demande : <libellé>, <tool>"). */
  askToggle: (label: string, name: string) => Locator;
  /** The header button that opens the approval requests and temporary grants. */
  requestsButton: () => Locator;
  /** Writes a project's policy file as an editor would, and waits until the service has read it. */
  editPolicyFile: (contents: unknown, project?: string) => Promise<void>;
  /** The id of the focused element. */
  focusedId: () => Promise<string>;
  /** The text of the page's live region (`role="status"`). */
  status: () => Promise<string>;
}

export const text = (locator: Locator): Promise<string> => locator.innerText();

/** Registers the hooks of a browser suite and returns accessors valid inside its tests. */
export function useBrowserHarness(): Harness {
  let browser: Browser | undefined;
  let service: RunningService | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  let demoDocument: unknown;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    if (!browserTestsEnabled) return;
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
    if (!browserTestsEnabled || browser === undefined || service === undefined) return;
    // Every test starts from the demo policy (DevFrontend: read tools + idea_ticket_update_carnet).
    const reset = await service.admin('PUT', '/projects/demo/mcp-tool-permissions', demoDocument);
    expect(reset.status).toBe(200);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'fr-FR' });
    context.setDefaultTimeout(5000); // a failing wait reports itself well before the test timeout
    page = await context.newPage();
    pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  afterEach(async () => {
    // A test's route handler may still be fetching a reload the page started as the test ended:
    // closing under it rejected with "Response has been disposed" once in a full run on Node 24.
    await page?.unrouteAll({ behavior: 'ignoreErrors' });
    await context?.close();
    // An uncaught error in the page fails the test even if the assertions passed.
    expect(pageErrors).toEqual([]);
  });

  const harness: Harness = {
    get service() {
      if (service === undefined) throw new Error('the service is not started');
      return service;
    },
    get page() {
      if (page === undefined) throw new Error('no page');
      return page;
    },
    async openPanel(token: string | null = ADMIN_TOKEN, { live = true } = {}) {
      const current = harness.page;
      if (!live) await current.route('**/events', (route) => route.abort());
      await current.goto(`${harness.service.baseUrl}/ui/`);
      await current.locator('#token-input').waitFor();
      if (token === null) await current.getByRole('button', { name: 'Continuer sans jeton' }).click();
      else {
        await current.getByLabel('Jeton', { exact: true }).fill(token);
        await current.getByRole('button', { name: 'Utiliser ce jeton' }).click();
      }
      await current.locator('#editor-title').waitFor();
    },
    target: (name) => harness.page.getByRole('navigation', { name: 'Cibles' }).getByRole('button', { name: new RegExp(`^${name}\\b`) }),
    toolBox: (label, name) => harness.page.getByRole('checkbox', { name: `${label}, ${name}`, exact: true }),
    askToggle: (label, name) => harness.page.getByRole('button', { name: `Sur demande : ${label}, ${name}`, exact: true }),
    requestsButton: () => harness.page.getByRole('button', { name: /^Demandes d’approbation, / }),
    async editPolicyFile(contents, project = 'demo') {
      const file = path.join(harness.service.projectsRoot, project, '.ideai', 'mcp-tool-permissions.json');
      const before = (await harness.service.permissions(project)).view.revision;
      await writeFile(file, typeof contents === 'string' ? contents : JSON.stringify(contents, null, 2));
      // The revision is a hash of the file's bytes: it moves once the watcher has read the new file.
      await expect.poll(async () => (await harness.service.permissions(project)).view.revision, POLL).not.toBe(before);
    },
    focusedId: () => harness.page.evaluate(() => document.activeElement?.id ?? ''),
    status: () => harness.page.getByRole('status').innerText(),
  };
  return harness;
}
