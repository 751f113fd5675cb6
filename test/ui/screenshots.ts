/**
 * Takes the screenshots of the permissions panel committed under `docs/screenshots/`, against the
 * real service over a temp copy of the demo projects:
 *   npx tsx test/ui/screenshots.ts
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { buildUi } from '../../ui/build.js';
import { launchChromium } from './browser.js';
import { ADMIN_TOKEN, startService, type RunningService } from './service.js';

const outDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshots');

interface Shot {
  file: string;
  width: number;
  height: number;
  /** What to do on the page before the capture (the page is open, with the admin token). */
  prepare: (page: import('playwright-core').Page) => Promise<void>;
}

const SHOTS: Shot[] = [
  {
    file: 'permissions-wide.png',
    width: 1280,
    height: 800,
    prepare: async (page) => {
      await page.getByRole('button', { name: /^DevFrontend/ }).click();
      await page.getByRole('checkbox', { name: 'Déléguer une demande à un agent, idea_ask_agent' }).check();
    },
  },
  {
    file: 'permissions-default-wide.png',
    width: 1280,
    height: 800,
    prepare: async (page) => {
      await page.getByRole('checkbox', { name: 'Écrire la mémoire projet, idea_memory_write' }).click();
      await page.locator('.inline-confirm').scrollIntoViewIfNeeded();
    },
  },
  {
    file: 'permissions-narrow.png',
    width: 420,
    height: 900,
    prepare: async (page) => {
      await page.getByRole('button', { name: /^QA/ }).click();
    },
  },
  {
    file: 'permissions-narrow-editor.png',
    width: 420,
    height: 900,
    prepare: async (page) => {
      await page.getByRole('button', { name: /^DevFrontend/ }).click();
      await page.getByRole('button', { name: /^Tickets, / }).scrollIntoViewIfNeeded();
      await page.evaluate(() => window.scrollBy(0, -60));
    },
  },
];

async function capture(browser: Browser, service: RunningService, shot: Shot): Promise<void> {
  const context = await browser.newContext({ viewport: { width: shot.width, height: shot.height }, locale: 'fr-FR', deviceScaleFactor: 1 });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(`${service.baseUrl}/ui/`);
  await page.getByLabel('Jeton', { exact: true }).fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Utiliser ce jeton' }).click();
  await page.getByRole('button', { name: /^Défaut projet/ }).waitFor();
  await shot.prepare(page);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.screenshot({ path: path.join(outDir, shot.file) });
  await context.close();
}

const service = await startService();
const browser = await launchChromium();
try {
  await buildUi();
  await mkdir(outDir, { recursive: true });
  for (const shot of SHOTS) await capture(browser, service, shot);
  process.stdout.write(`${SHOTS.length} screenshots written to ${path.relative(process.cwd(), outDir)}\n`);
} finally {
  await browser.close();
  await service.close();
}
