/**
 * One folder reachable under two project ids (a symlink in the projects root, or
 * two PDP_PROJECTS ids whose paths lead to one folder) is one file for writes: concurrent
 * acknowledged writes through both ids are all kept, and both ids keep serving decisions.
 */
import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withAgentOverride } from '../../server/domain/edit.js';
import type { ProjectRegistry } from '../../server/projects/registry.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, policyPathOf, startRegistry, timeUntil } from '../support/folder-registry.js';

const WRITES = 40;

/** 40 concurrent writes, alternately through each id; resolves once all are acknowledged. */
async function writeThroughBoth(registry: ProjectRegistry, ids: readonly [string, string]): Promise<string[]> {
  const agents = Array.from({ length: WRITES }, (_, index) => `Agent${index}`);
  await Promise.all(
    agents.map((agent, index) => {
      const project = registry.get(ids[index % 2] as string);
      if (project === undefined) throw new Error(`no project ${ids[index % 2]}`);
      return project.write((policy) => withAgentOverride(policy.document, agent, ['idea_memory_write']));
    }),
  );
  return agents;
}

async function agentsIn(file: string): Promise<string[]> {
  const document = JSON.parse(await readFile(file, 'utf8')) as { agents: { agentId: string }[] };
  return document.agents.map((agent) => agent.agentId).sort();
}

describe('one folder under two project ids', () => {
  it(`keeps all ${WRITES} concurrent writes through a symlink alias in the projects root`, async () => {
    const root = await tempFolder();
    const alpha = await makeProject(root, 'alpha', null);
    await symlink(alpha, path.join(root, 'beta'));
    const { registry } = await startRegistry({ projectsRoot: root });
    expect(registry.list().map((project) => project.id)).toEqual(['alpha', 'beta']);
    const agents = await writeThroughBoth(registry, ['alpha', 'beta']);
    expect(await agentsIn(policyPathOf(alpha))).toEqual([...agents].sort());
    // Both ids serve the file's content (each id's own writes at once, the other's through the watcher).
    await timeUntil(
      () => agents.every((agent) => ['alpha', 'beta'].every((id) => decideWith(registry, id, agent, 'idea_memory_write').allow)),
      'every grant under both ids',
    );
  });

  it(`keeps all ${WRITES} concurrent writes through two PDP_PROJECTS ids, one of them a link`, async () => {
    const folder = await tempFolder();
    const real = await makeProject(folder, 'real', null);
    const link = path.join(folder, 'link');
    await symlink(real, link);
    const { registry } = await startRegistry({ projects: { a: real, b: link } });
    const agents = await writeThroughBoth(registry, ['a', 'b']);
    expect(await agentsIn(policyPathOf(real))).toEqual([...agents].sort());
    await timeUntil(
      () => agents.every((agent) => ['a', 'b'].every((id) => decideWith(registry, id, agent, 'idea_memory_write').allow)),
      'every grant under both ids',
    );
  });
});
