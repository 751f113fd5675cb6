/**
 * A reload started by the watcher runs on its own, no caller waiting for it: when it fails in a way
 * nobody foresaw, the failure is logged and the project denies every call until a reload succeeds
 * (fail closed), instead of an unhandled rejection and a project that keeps its old state. Real
 * folders, the real watcher; the failure is injected in a subscriber of the registry's changes.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ProjectRegistry } from '../../server/projects/registry.js';
import { policyText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, policyPathOf, timeUntil } from '../support/folder-registry.js';

const GRANTS = { QA: ['idea_memory_write'] };

let registry: ProjectRegistry | undefined;
afterEach(() => {
  registry?.close();
  registry = undefined;
});

/** A registry whose log lines are kept, parsed. */
async function startLogged(projectsRoot: string, rescanMs = 0): Promise<{ registry: ProjectRegistry; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  registry = new ProjectRegistry({ projectsRoot, rescanMs, logger: pino({ level: 'info' }, stream) });
  await registry.start();
  return { registry, lines };
}

describe('a reload that fails', () => {
  it('is logged and denies every call of the project until a reload succeeds', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], GRANTS));
    const { registry, lines } = await startLogged(folder);
    let failing = true;
    registry.changes.subscribe({
      folderReplaced: (project) => {
        if (failing && project === 'demo') throw new Error('injected failure');
      },
    });
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_write').allow).toBe(true);

    // The project's folder is replaced by another that grants the same: the reload that follows fails.
    const away = await tempFolder();
    await rename(root, path.join(away, 'demo'));
    await mkdir(path.join(root, '.ideai'), { recursive: true });
    await writeFile(policyPathOf(root), policyText([], GRANTS));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_write').reason === 'policy_invalid', 'denied');
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_read')).toMatchObject({ allow: false, reason: 'policy_invalid' });
    const failure = lines.find((line) => line.level === 50 && line.project === 'demo');
    expect(String(failure?.msg)).toContain('every call is denied until a reload succeeds');
    expect(JSON.stringify(failure)).toContain('injected failure');

    // Once the failure is gone, the next change reloads it.
    failing = false;
    await writeFile(policyPathOf(root), policyText([], { QA: ['idea_memory_write', 'idea_ticket_create'] }));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_ticket_create').allow, 'reloaded');
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_write').allow).toBe(true);
  });

  it('is tried again by the rescan when no change is heard, the replaced folder told again', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], GRANTS));
    const { registry } = await startLogged(folder, 100);
    let failing = true;
    let told = 0;
    registry.changes.subscribe({
      folderReplaced: () => {
        told++;
        if (failing) throw new Error('injected failure');
      },
    });
    const away = await tempFolder();
    await rename(root, path.join(away, 'demo'));
    await mkdir(path.join(root, '.ideai'), { recursive: true });
    await writeFile(policyPathOf(root), policyText([], GRANTS));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_write').reason === 'policy_invalid', 'denied');
    failing = false;
    const toldWhileFailing = told;
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_write').allow, 'reloaded by the rescan');
    // The subscribers are told of the replaced folder again: what hung on the old one must go.
    expect(told).toBeGreaterThan(toldWhileFailing);
  });
});
