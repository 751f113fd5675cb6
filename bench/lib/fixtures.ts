/**
 * Benchmark fixtures: project folders on disk (a copy of the demo project, and the 1,000 × 50
 * scale tree) and the query mixes the load generator replays. Everything is written to temp
 * folders; nothing under `examples/` is touched.
 */
import { cp, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { READ_ONLY_DEFAULT, type DecideQuery, type PolicyDocument } from '../../schemas/index.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const POLICY_FILE = path.join('.ideai', 'mcp-tool-permissions.json');
export const AGENTS_FILE = path.join('.ideai', 'agents.json');

/** Copies the bundled `demo` project into a fresh projects root (so writes never reach the repo). */
export async function makeDemoRoot(): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-demo-'));
  await cp(path.join(REPO_ROOT, 'examples', 'projects', 'demo'), path.join(root, 'demo'), { recursive: true });
  return root;
}

const DEMO_AGENTS = ['Main', 'Architect', 'DevFrontend', 'QA', 'Git'] as const;
const DEMO_TOOLS = ['idea_ticket_read', 'idea_memory_write', 'idea_ticket_update_carnet', 'idea_list_agents'] as const;

/**
 * The `/decide` mix for the demo project: every agent × two read and two write tools, plus an
 * unknown tool and an unknown project. About half allowed, half denied (docs/api.md#resolving-a-decision resolution).
 */
export function demoQueryMix(): DecideQuery[] {
  const queries: DecideQuery[] = [];
  for (const requester of DEMO_AGENTS) {
    for (const tool of DEMO_TOOLS) {
      queries.push(
        tool.startsWith('idea_ticket_')
          ? { project: 'demo', requester, tool, arguments: { issueRef: '#82' } }
          : { project: 'demo', requester, tool },
      );
    }
  }
  queries.push({ project: 'demo', requester: 'QA', tool: 'idea_not_a_tool' });
  queries.push({ project: 'nope', requester: 'Main', tool: 'idea_ticket_read' });
  return queries;
}

/**
 * The answer docs/api.md#resolving-a-decision gives for a query of {@link demoQueryMix} on the untouched demo policy: read
 * tools for everyone (no project default), plus `idea_ticket_update_carnet` for DevFrontend's override.
 */
export function demoExpectedAllow(query: DecideQuery): boolean {
  if (query.project !== 'demo') return false;
  if ((READ_ONLY_DEFAULT as readonly string[]).includes(query.tool)) return true;
  return query.requester === 'DevFrontend' && query.tool === 'idea_ticket_update_carnet';
}

export const SCALE_AGENTS_PER_PROJECT = 50;
export const SCALE_OVERRIDES_PER_PROJECT = 10;
const WRITE_TOOLS_FOR_OVERRIDES = ['idea_ticket_update_carnet', 'idea_memory_write', 'idea_ticket_create'] as const;

function scaleProjectId(index: number): string {
  return `p${String(index).padStart(4, '0')}`;
}

function scaleAgentId(index: number): string {
  return `agent-${String(index).padStart(2, '0')}`;
}

/** Writes one scale project: 50 declared agents, overrides for the first 10 (read-only + one write tool). */
async function writeScaleProject(root: string, id: string): Promise<void> {
  const folder = path.join(root, id, '.ideai');
  await mkdir(folder, { recursive: true });
  const agents = Array.from({ length: SCALE_AGENTS_PER_PROJECT }, (_, i) => ({ id: scaleAgentId(i), name: `Agent ${i}` }));
  const document: PolicyDocument = {
    version: 1,
    agents: Array.from({ length: SCALE_OVERRIDES_PER_PROJECT }, (_, i) => ({
      agentId: scaleAgentId(i),
      policy: { allowedTools: [...READ_ONLY_DEFAULT, WRITE_TOOLS_FOR_OVERRIDES[i % WRITE_TOOLS_FOR_OVERRIDES.length]!] },
    })),
  };
  await writeFile(path.join(folder, 'agents.json'), `${JSON.stringify({ agents }, null, 2)}\n`);
  await writeFile(path.join(folder, 'mcp-tool-permissions.json'), `${JSON.stringify(document, null, 2)}\n`);
}

/** Generates `projects` scale projects under a fresh temp root and returns the root and project ids. */
export async function makeScaleRoot(projects: number): Promise<{ root: string; ids: string[] }> {
  const root = await mkdtemp(path.join(os.tmpdir(), `pdp-bench-scale-${projects}-`));
  const ids = Array.from({ length: projects }, (_, i) => scaleProjectId(i));
  const batch = 50;
  for (let i = 0; i < ids.length; i += batch) {
    await Promise.all(ids.slice(i, i + batch).map((id) => writeScaleProject(root, id)));
  }
  return { root, ids };
}

/**
 * A deterministic query mix over the given scale projects: requesters spread over overridden and
 * inheriting agents, tools over read and write, so both allow and deny paths are exercised.
 */
export function scaleQueryMix(projectIds: readonly string[], size = 200): DecideQuery[] {
  const tools = ['idea_ticket_read', 'idea_memory_write', 'idea_ticket_update_carnet', 'idea_list_agents', 'idea_ticket_create'];
  let seed = 0x2545f491;
  const next = (limit: number): number => {
    // xorshift32: a fixed sequence, so every run replays the same mix.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % limit;
  };
  return Array.from({ length: size }, () => ({
    project: projectIds[next(projectIds.length)]!,
    requester: scaleAgentId(next(SCALE_AGENTS_PER_PROJECT)),
    tool: tools[next(tools.length)]!,
  }));
}
