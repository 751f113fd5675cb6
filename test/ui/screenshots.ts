/**
 * Takes the screenshots of the permissions panel committed under `docs/screenshots/` (shown in
 * docs/ui.md), against the real service over a temp copy of the demo projects:
 *   npx tsx test/ui/screenshots.ts [file-name ...]   (no names: all of them)
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../ui/build.js';
import { launchChromium } from './browser.js';
import { LIMIT_SHOTS } from './limit-shots.js';
import { ADMIN_TOKEN, DEMO_PROJECTS, startService, type RunningService } from './demo-service.js';
import { READ_TOOLS } from '../support/tools.js';

const outDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshots');

interface Shot {
  file: string;
  width: number;
  height: number;
  /** Changes behind the page's back before it opens (files on disk, API calls). */
  before?: (service: RunningService) => Promise<void>;
  /** What to do on the page before the capture (the page is open, with the admin token). */
  prepare: (page: Page, service: RunningService) => Promise<void>;
}

const policyFile = (service: RunningService): string => path.join(service.projectsRoot, 'demo', '.ideai', 'mcp-tool-permissions.json');
const agentsFile = (service: RunningService): string => path.join(service.projectsRoot, 'demo', '.ideai', 'agents.json');
const serversFile = (service: RunningService): string => path.join(service.projectsRoot, 'demo', '.ideai', 'mcp-servers.json');

/** `fs` declared with two tools, and what its proxy reported beyond them (docs/ui.md#other-mcp-servers). */
async function declaredFilesystem(service: RunningService): Promise<void> {
  await writeFile(
    serversFile(service),
    JSON.stringify({
      version: 1,
      servers: {
        fs: {
          label: 'Fichiers',
          tools: {
            read_text_file: { access: 'read', label: 'Lire un fichier' },
            write_file: { access: 'write', label: 'Écrire un fichier' },
          },
        },
      },
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  await service.admin('POST', '/projects/demo/servers/fs/discovered', {
    tools: [
      {
        name: 'list_directory',
        title: 'List Directory',
        description: 'Get a detailed listing of all files and directories.',
        annotations: { readOnlyHint: true },
      },
      {
        name: 'move_file',
        title: 'Move File',
        description: 'Move or rename files and directories.',
        annotations: { readOnlyHint: false, destructiveHint: true },
      },
    ],
  });
}

/** DevFrontend's editor scrolled to the servers' group and « Tools inconnus », list_directory's « Déclarer » open. */
async function openDeclareForm(page: Page): Promise<void> {
  await agent(page, 'DevFrontend').click();
  await page.getByRole('button', { name: 'Déclarer fs/list_directory' }).click();
  await page.locator('#declare-label').fill('Lister un dossier');
  await page.locator('[id="group-toggle-server:fs"]').scrollIntoViewIfNeeded();
  await page.evaluate(() => {
    window.scrollBy(0, 200);
  });
}
const agent = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Cibles' }).getByRole('button', { name: new RegExp(`^${name}\\b`) });
/** The checkbox of a tool row (checked = Autorisé). */
const box = (page: Page, name: string) => page.locator(`#tool-${name}`);

/** DevFrontend with the conditions of the example in docs/api.md#conditions-on-a-tools-arguments (the demo file has none). */
async function conditionedDevFrontend(service: RunningService): Promise<void> {
  await service.admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', {
    allowedTools: [...READ_TOOLS, 'idea_ask_agent', 'idea_ticket_update_carnet', 'idea_run_in_background'],
    conditions: {
      idea_ask_agent: { agentId: { in: ['QA'] } },
      idea_ticket_update_carnet: { issueRef: { in: ['#82', '#90'] } },
      idea_run_in_background: { command: { prefix: ['npm test', 'npm run lint'] } },
    },
  });
}

/** Opens idea_ask_agent's « Conditions » and adds Git by keyboard, as a user would. */
async function openAskAgentConditions(page: Page): Promise<void> {
  await agent(page, 'DevFrontend').click();
  await page.locator('#cond-idea_ask_agent-toggle').click();
  await page.locator('#cond-idea_ask_agent-0-value').fill('Git');
  await page.locator('#cond-idea_ask_agent-0-value').press('Enter');
  await page.locator('#cond-idea_ask_agent-editor .chip').nth(1).waitFor();
  await page.locator('#group-toggle-delegation').scrollIntoViewIfNeeded();
  await page.evaluate(() => {
    window.scrollBy(0, -80);
  });
}

const SHOTS: Shot[] = [
  {
    file: 'permissions-wide.png',
    width: 1440,
    height: 900,
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await box(page, 'idea_ask_agent').check();
    },
  },
  {
    file: 'permissions-default-wide.png',
    width: 1440,
    height: 900,
    prepare: async (page) => {
      await box(page, 'idea_memory_write').click();
      await page.locator('.inline-confirm').scrollIntoViewIfNeeded();
    },
  },
  {
    file: 'permissions-saved.png',
    width: 1440,
    height: 900,
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await box(page, 'idea_create_skill').check();
      await page.locator('#save').click();
      await page.locator('#saved-status:not(:empty)').waitFor();
    },
  },
  {
    file: 'permissions-conflict.png',
    width: 1440,
    height: 900,
    prepare: async (page, service) => {
      await agent(page, 'DevFrontend').click();
      await box(page, 'idea_memory_write').check();
      const read = (await service.permissions('demo')).view.projectDefault.allowedTools;
      await service.admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', { allowedTools: read });
      // The live event shows the conflict before any save.
      await page.locator('#conflict').waitFor();
      await page.locator('#conflict').scrollIntoViewIfNeeded();
    },
  },
  {
    file: 'permissions-undo.png',
    width: 1440,
    height: 900,
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await page.locator('#reset-override').click();
      await page.locator('.undo-notice').waitFor();
    },
  },
  {
    file: 'permissions-invalid-repair.png',
    width: 1440,
    height: 900,
    before: (service) => writeFile(policyFile(service), '{\n  "version": 1,\n  "agents": [\n'),
    prepare: async (page) => {
      await page.locator('#repair-read-only').click();
      await page.locator('#repair-confirm').waitFor();
    },
  },
  {
    file: 'permissions-agent-ids.png',
    width: 1440,
    height: 900,
    before: (service) =>
      writeFile(
        agentsFile(service),
        JSON.stringify({
          agents: [
            { id: 'QA', name: 'QA' },
            { id: 'Release', name: 'QA' },
            { id: 'QA\u200b', name: 'QA\u200b' },
            { id: 'ＱＡ', name: 'ＱＡ' },
          ],
        }),
      ),
    prepare: async (page) => {
      await page
        .getByRole('navigation', { name: 'Cibles' })
        .getByRole('button', { name: /\(id Release\)/ })
        .click();
    },
  },
  {
    file: 'permissions-token.png',
    width: 1440,
    height: 900,
    prepare: async (page) => {
      await page.locator('#token-forget').click();
      await page.locator('#token-open').click();
      await page.locator('#token-input').fill('wrong-token');
      await page.locator('#token-input').press('Enter');
      await page.locator('#token-error').waitFor();
    },
  },
  {
    file: 'permissions-ask.png',
    width: 1440,
    height: 900,
    before: async (service) => {
      await service.admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', {
        allowedTools: [...READ_TOOLS, 'idea_ticket_update_carnet'],
        askTools: ['idea_ask_agent', 'idea_memory_write', 'idea_ticket_update_status'],
      });
    },
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await page.locator('#quick-grants').scrollIntoViewIfNeeded();
      await page.evaluate(() => {
        window.scrollBy(0, 160);
      });
    },
  },
  {
    file: 'permissions-live-drift.png',
    width: 1440,
    height: 900,
    prepare: async (page, service) => {
      await agent(page, 'QA').click();
      await page.locator('#create-override').click();
      await box(page, 'idea_memory_write').check();
      const document = JSON.parse(await readFile(policyFile(service), 'utf8')) as { agents: unknown[] };
      document.agents.push({ agentId: 'Git', policy: { allowedTools: ['idea_ticket_list'] } });
      await writeFile(policyFile(service), JSON.stringify(document, null, 2));
      await page.locator('#drift-notice').waitFor();
      await page.locator('#save').scrollIntoViewIfNeeded();
    },
  },
  {
    file: 'permissions-narrow.png',
    width: 420,
    height: 900,
    prepare: async (page) => {
      await agent(page, 'QA').click();
    },
  },
  {
    file: 'permissions-narrow-editor.png',
    width: 420,
    height: 900,
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await page.getByRole('button', { name: /^Tickets, / }).scrollIntoViewIfNeeded();
      await page.evaluate(() => {
        window.scrollBy(0, -60);
      });
    },
  },
  {
    file: 'permissions-denials.png',
    width: 1440,
    height: 900,
    before: async (service) => {
      for (let call = 0; call < 4; call += 1) await service.decide('demo', 'QA', 'idea_memory_write');
      await service.decide('demo', 'QA', 'idea_ticket_update_status');
      await service.decide('demo', 'QA', 'idea_not_a_tool');
    },
    prepare: async (page) => {
      await agent(page, 'QA').click();
      await page.locator('#denials li').first().waitFor();
      await page.locator('#quick-grants').scrollIntoViewIfNeeded();
      await page.evaluate(() => {
        window.scrollBy(0, 120);
      });
    },
  },
  {
    file: 'permissions-denials-narrow.png',
    width: 420,
    height: 900,
    prepare: async (page) => {
      await agent(page, 'QA').click();
      await page.locator('#denials li').first().waitFor();
      await page.locator('#denials').scrollIntoViewIfNeeded();
      await page.evaluate(() => {
        window.scrollBy(0, 200);
      });
    },
  },
  {
    file: 'permissions-preview.png',
    width: 1440,
    height: 900,
    before: async (service) => {
      for (let call = 0; call < 12; call += 1) await service.decide('demo', 'DevFrontend', 'idea_ticket_update_carnet');
      for (let call = 0; call < 3; call += 1) await service.decide('demo', 'DevFrontend', 'idea_memory_write');
    },
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await box(page, 'idea_ticket_update_carnet').uncheck();
      await box(page, 'idea_memory_write').check();
      await page.locator('#draft-preview:not([aria-busy]) p').nth(1).waitFor();
      await page.locator('#save').scrollIntoViewIfNeeded();
    },
  },
  {
    file: 'permissions-preview-narrow.png',
    width: 420,
    height: 900,
    before: async (service) => {
      for (let call = 0; call < 12; call += 1) await service.decide('demo', 'DevFrontend', 'idea_ticket_update_carnet');
    },
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await box(page, 'idea_ticket_update_carnet').uncheck();
      await page.locator('#draft-preview:not([aria-busy]) p').first().waitFor();
      await page.locator('#save').scrollIntoViewIfNeeded();
    },
  },
  {
    file: 'permissions-conditions.png',
    width: 1440,
    height: 900,
    before: conditionedDevFrontend,
    prepare: async (page) => {
      await openAskAgentConditions(page);
    },
  },
  {
    file: 'permissions-conditions-narrow.png',
    width: 420,
    height: 900,
    before: conditionedDevFrontend,
    prepare: async (page) => {
      await openAskAgentConditions(page);
    },
  },
  ...LIMIT_SHOTS,
  // Last: its requests and grant stay in the service's memory.
  {
    file: 'permissions-requests.png',
    width: 1440,
    height: 900,
    before: async (service) => {
      await service.admin('PUT', '/projects/demo/mcp-tool-permissions/agents/QA', {
        allowedTools: READ_TOOLS,
        askTools: ['idea_memory_write', 'idea_ticket_update_carnet'],
      });
      await service.decide('demo', 'QA', 'idea_memory_write');
      await service.decide('demo', 'QA', 'idea_ticket_update_carnet');
      await service.admin('POST', '/projects/demo/grants', { requester: 'DevFrontend', tools: ['idea_ask_agent'], ttlSeconds: 3600 });
    },
    prepare: async (page) => {
      await page.locator('#requests-open').click();
      await page.locator('.request').first().waitFor();
      await page.locator('.request').first().getByRole('button', { name: 'Autoriser pendant…' }).click();
    },
  },
  {
    file: 'permissions-temporary.png',
    width: 1440,
    height: 900,
    prepare: async (page) => {
      await agent(page, 'DevFrontend').click();
      await page.locator('#state-idea_ask_agent', { hasText: 'temporaire' }).waitFor();
      await page.locator('#summary').scrollIntoViewIfNeeded();
      await page.evaluate(() => {
        window.scrollBy(0, 120);
      });
    },
  },
  {
    file: 'permissions-servers.png',
    width: 1440,
    height: 900,
    before: declaredFilesystem,
    prepare: openDeclareForm,
  },
  {
    file: 'permissions-servers-narrow.png',
    width: 420,
    height: 900,
    before: declaredFilesystem,
    prepare: openDeclareForm,
  },
];

async function capture(
  browser: Browser,
  service: RunningService,
  shot: Shot,
  originals: { policy: string; agents: string },
): Promise<void> {
  // Every shot starts from the demo files, as the tests do.
  await writeFile(policyFile(service), originals.policy);
  await writeFile(agentsFile(service), originals.agents);
  await rm(serversFile(service), { force: true });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await shot.before?.(service);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const context = await browser.newContext({ viewport: { width: shot.width, height: shot.height }, locale: 'fr-FR', deviceScaleFactor: 1 });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(`${service.baseUrl}/ui/#token=${encodeURIComponent(ADMIN_TOKEN)}`);
  await page.locator('#editor-title').waitFor();
  await page.locator('#token-pill', { hasText: 'vérifié' }).waitFor();
  await shot.prepare(page, service);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.screenshot({ path: path.join(outDir, shot.file) });
  await context.close();
}

const service = await startService();
const browser = await launchChromium();
try {
  await buildUi();
  await mkdir(outDir, { recursive: true });
  const originals = {
    policy: await readFile(path.join(DEMO_PROJECTS, 'demo', '.ideai', 'mcp-tool-permissions.json'), 'utf8'),
    agents: await readFile(path.join(DEMO_PROJECTS, 'demo', '.ideai', 'agents.json'), 'utf8'),
  };
  const wanted = process.argv.slice(2);
  const shots = wanted.length === 0 ? SHOTS : SHOTS.filter((shot) => wanted.includes(shot.file));
  for (const shot of shots) await capture(browser, service, shot, originals);
  process.stdout.write(`${shots.length} screenshots written to ${path.relative(process.cwd(), outDir)}\n`);
} finally {
  await browser.close();
  await service.close();
}
