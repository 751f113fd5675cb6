/**
 * `idea-pdp serve`: the service, as `npm start` runs it. Without projects configured it serves
 * copies of the demo projects made in its state folder, never the package's own files (which
 * live under node_modules and would be edited there), and says so.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { demoProjectsRoot, prepareStateDir, projectsConfigured, stateDirGiven, stateDirOf } from '../config.js';
import { runServer } from '../start-server.js';
import type { Output } from './commands.js';

export async function serveCommand(output: Output): Promise<void> {
  // A copy: the demo folder chosen below is this run's setting, not a change to the process's environment.
  const env = { ...process.env };
  const stateDir = stateDirOf(env);
  if (!projectsConfigured(env)) {
    await prepareStateDir(stateDir);
    const copies = path.join(stateDir, 'demo-projects');
    // Copied once: edits made through the panel stay between runs.
    const there = await fs.stat(copies).catch(() => undefined);
    if (there === undefined) await fs.cp(demoProjectsRoot(), copies, { recursive: true, errorOnExist: false });
    env.PDP_PROJECTS_ROOT = copies;
    output.err(
      `idea-pdp serve: no PDP_PROJECTS_ROOT or PDP_PROJECTS: serving copies of the demo projects in ${copies}\n` +
        '  (set PDP_PROJECTS_ROOT=<folder of project folders> or PDP_PROJECTS=id=/abs/path,... for real projects)\n',
    );
  }
  // The default is outside any repository; a folder given by hand may be inside one.
  const advice = stateDirGiven(env) ? `: keep it out of git (.gitignore: ${path.basename(stateDir)}/)` : '';
  output.err(`idea-pdp serve: state (admin token, grants, recent decisions) in ${stateDir}${advice}\n`);
  await runServer(env);
}
