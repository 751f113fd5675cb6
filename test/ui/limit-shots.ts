/**
 * The screenshots of usage limits in the panel (docs/ui.md#usage-limits), taken by
 * `npx tsx test/ui/screenshots.ts` with the others: a limited row and its editor open, and Refus
 * récents with « limite atteinte » and « Relever la limite », each at 1440 and 420 px.
 */
import type { Page } from 'playwright-core';
import type { RunningService } from './demo-service.js';
import { READ_TOOLS } from '../support/tools.js';

interface LimitShot {
  file: string;
  width: number;
  height: number;
  before?: (service: RunningService) => Promise<void>;
  prepare: (page: Page, service: RunningService) => Promise<void>;
}

const agent = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Cibles' }).getByRole('button', { name: new RegExp(`^${name}\\b`) });

/** DevFrontend with the example of docs/api.md#usage-limits, and one condition beside a limit. */
async function limitedDevFrontend(service: RunningService): Promise<void> {
  await service.admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', {
    allowedTools: [...READ_TOOLS, 'idea_ask_agent', 'idea_ticket_update_carnet', 'idea_run_in_background'],
    conditions: { idea_ask_agent: { agentId: { in: ['QA'] } } },
    limits: { idea_ask_agent: { max: 20, per: '1h' }, idea_run_in_background: { max: 5, per: '10m' } },
  });
}

/** QA may write the memory twice an hour and tried three times (the window is kept across shots). */
async function cappedQa(service: RunningService): Promise<void> {
  await service.admin('PUT', '/projects/demo/mcp-tool-permissions/agents/QA', {
    allowedTools: [...READ_TOOLS, 'idea_memory_write'],
    limits: { idea_memory_write: { max: 2, per: '1h' } },
  });
  for (let call = 0; call < 3; call += 1) await service.decide('demo', 'QA', 'idea_memory_write');
}

async function openLimitEditor(page: Page): Promise<void> {
  await agent(page, 'DevFrontend').click();
  await page.locator('#cond-idea_ask_agent-toggle').click();
  await page.locator('#limit-idea_ask_agent-max').waitFor();
  // Narrow, the row, its conditions and its limit take the whole height: the row goes to the top.
  const narrow = (page.viewportSize()?.width ?? 1440) < 760;
  await page.locator(narrow ? '#tool-idea_ask_agent' : '#group-toggle-delegation').scrollIntoViewIfNeeded();
  await page.evaluate(
    (offset) => {
      const row = document.getElementById('tool-idea_ask_agent');
      if (offset === 0 || row === null) window.scrollBy(0, -80);
      else window.scrollTo(0, row.getBoundingClientRect().top + window.scrollY - offset);
    },
    narrow ? 16 : 0,
  );
  await page.mouse.move(0, 0);
}

async function showLimitDenial(page: Page): Promise<void> {
  await agent(page, 'QA').click();
  await page.locator('#denial-raise-idea_memory_write').waitFor();
  await page.locator('#denials').scrollIntoViewIfNeeded();
  await page.evaluate(() => {
    window.scrollBy(0, -40);
  });
}

export const LIMIT_SHOTS: LimitShot[] = [
  { file: 'permissions-limits.png', width: 1440, height: 900, before: limitedDevFrontend, prepare: openLimitEditor },
  { file: 'permissions-limits-narrow.png', width: 420, height: 900, before: limitedDevFrontend, prepare: openLimitEditor },
  { file: 'permissions-limits-denials.png', width: 1440, height: 900, before: cappedQa, prepare: showLimitDenial },
  { file: 'permissions-limits-denials-narrow.png', width: 420, height: 900, before: cappedQa, prepare: showLimitDenial },
];
