/**
 * The lines `idea-pdp preview` prints for a reviewer: one per agent whose effective policy changes
 * (tools added and removed, put on or taken off ask, each condition's before and after), then the
 * replay's counts when a service answered. `--json` prints the document instead.
 */
import { escapeControls } from '../../schemas/display.js';
import type { PolicyProblem, PreviewAgent, PreviewReplay } from '../../schemas/index.js';
import { problemLine } from '../domain/policy-check.js';
import { plural } from './commands.js';

/** A name from a file under review printed on one line: control and bidi characters are written as escapes. */
const safe = escapeControls;

const names = (tools: readonly string[]): string => tools.map(safe).join(', ');

/** A tool's conditions as written, compact; `none` when it has none. */
const conditionText = (conditions: PreviewAgent['conditions'][number]['before']): string =>
  conditions === null ? 'none' : safe(JSON.stringify(conditions));

export function agentLine(agent: PreviewAgent): string {
  const parts: string[] = [];
  if (agent.added.length > 0) parts.push(`added ${names(agent.added)}`);
  if (agent.removed.length > 0) parts.push(`removed ${names(agent.removed)}`);
  if (agent.askAdded.length > 0) parts.push(`put on ask ${names(agent.askAdded)}`);
  if (agent.askRemoved.length > 0) parts.push(`taken off ask ${names(agent.askRemoved)}`);
  for (const change of agent.conditions)
    parts.push(`${safe(change.tool)} conditions ${conditionText(change.before)} -> ${conditionText(change.after)}`);
  const who = agent.agentId === '*default' ? '*default (project default)' : safe(agent.agentId);
  return `${who}: ${parts.length === 0 ? 'order of tools changed' : parts.join('; ')}`;
}

function replayLines(replay: PreviewReplay): string[] {
  const { counts } = replay;
  const lines = [
    `replay of ${plural(replay.decisions, 'recent decision')}: ${counts.allowToDeny} allow -> deny, ${counts.denyToAllow} -> allow, ${counts.toAsk} -> ask` +
      (counts.notReplayable === undefined || counts.notReplayable === 0 ? '' : `, ${counts.notReplayable} not replayable`),
  ];
  for (const change of replay.changed)
    lines.push(`  ${safe(change.requester)} ${safe(change.tool)}: ${change.before} -> ${change.after} (${plural(change.calls, 'call')})`);
  return lines;
}

export interface PreviewShown {
  readonly valid: boolean;
  readonly errors: readonly PolicyProblem[];
  readonly agents: readonly PreviewAgent[];
  readonly replay?: PreviewReplay;
}

export function previewSummary(preview: PreviewShown): string {
  const lines = preview.errors.map(problemLine);
  if (!preview.valid) {
    const errors = preview.errors.filter((one) => one.severity === 'error').length;
    return `${[...lines, `invalid: ${plural(errors, 'error')}; nothing to preview`].join('\n')}\n`;
  }
  lines.push(...preview.agents.map(agentLine));
  lines.push(preview.agents.length === 0 ? 'no agent changes' : `${plural(preview.agents.length, 'agent')} change`);
  if (preview.replay !== undefined) lines.push(...replayLines(preview.replay));
  return `${lines.join('\n')}\n`;
}
