/**
 * The README's "tour in five commands", run as written: each command of its first `sh` block goes
 * through bash and curl against the real service on a real port (the README's `localhost:8787`
 * pointed at it), with a HOME whose `.local/state/idea-pdp/admin-token` (the default state folder)
 * holds the service's admin token, and no XDG_STATE_HOME.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { ADMIN_TOKEN, demoProjects, startTestServer, suiteScope } from '../support/app.js';
import { tempFolder } from '../support/temp-folder.js';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '..', '..');

/** The commands of the tour: the first `sh` block after its heading, continuation lines joined, comments dropped. */
async function tourCommands(): Promise<string[]> {
  const readme = await readFile(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A tour'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const commands: string[] = [];
  let current = '';
  for (const line of block.split('\n')) {
    if (current === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    current += `${line}\n`;
    if (!line.trimEnd().endsWith('\\') && !insideSingleQuotes(current)) {
      commands.push(current.trim());
      current = '';
    }
  }
  return commands;
}

const insideSingleQuotes = (text: string): boolean => (text.match(/'/g)?.length ?? 0) % 2 === 1;

const suite = suiteScope();
let baseUrl: string;

beforeAll(async () => {
  ({ baseUrl } = await startTestServer(suite, demoProjects()));
});

describe('README: the tour in five commands', () => {
  it('runs as written, and step 4 adds idea_memory_write to the read tools QA had, removing none', async () => {
    const commands = await tourCommands();
    expect(commands).toHaveLength(5);
    const cwd = await tempFolder('readme-tour-cwd-');
    const home = await tempFolder('readme-tour-home-');
    const state = path.join(home, '.local', 'state', 'idea-pdp');
    await mkdir(state, { recursive: true, mode: 0o700 });
    await writeFile(path.join(state, 'admin-token'), `${ADMIN_TOKEN}\n`, { mode: 0o600 });
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
    delete env.XDG_STATE_HOME;
    const outputs: string[] = [];
    for (const command of commands) {
      const local = command.replaceAll('localhost:8787', new URL(baseUrl).host);
      const { stdout } = await run('bash', ['-c', `set -euo pipefail; ${local}`], { cwd, env, timeout: 30_000 });
      outputs.push(stdout);
    }
    const [before, , , override, after] = outputs;
    expect(JSON.parse(before ?? '')).toMatchObject({ allow: false, reason: 'not_in_allowlist' });

    const view = JSON.parse(override ?? '') as {
      agents: { agentId: string; added: string[]; removed: string[]; allowedTools: string[] }[];
    };
    const qa = view.agents.find((agent) => agent.agentId === 'QA');
    expect(qa?.removed).toEqual([]);
    expect(qa?.added).toEqual(['idea_memory_write']);
    expect(qa?.allowedTools).toEqual([...READ_ONLY_DEFAULT, 'idea_memory_write']);

    expect(JSON.parse(after ?? '')).toMatchObject({ allow: true, source: 'agent-override' });
  }, 60_000);
});
