/** `idea-pdp check`: every problem of each project's policy and agents files, in file order, then a summary. */
import { escapeControls } from '../../schemas/display.js';
import type { PolicyProblem } from '../../schemas/index.js';
import {
  AGENTS_FILE,
  POLICY_FILE,
  TEST_FILE,
  agentsProblems,
  checkPolicy,
  moreLine,
  problemLine,
  strictly,
} from '../domain/policy-check.js';
import { checkServers } from '../domain/servers-check.js';
import { SERVERS_FILE } from '../domain/servers-file.js';
import { editDistance } from '../domain/suggest.js';
import { plural, problemAt, walkedProjectFolders, shown, type Output } from './commands.js';
import { declaredAgents, parseTestFile } from '../domain/policy-tests.js';
import { readProject, readTestText, type ProjectInput } from './project-input.js';
import { UsageError } from './usage.js';

export interface CheckOptions {
  readonly strict: boolean;
  readonly json: boolean;
  readonly require: boolean;
  readonly staged: boolean;
}

const READ_NAMES = [POLICY_FILE, AGENTS_FILE, TEST_FILE, SERVERS_FILE].map((file) => file.slice('.ideai/'.length));

/** A file in `.ideai/` named within a few edits of one the service reads: most likely meant to be it. */
export function misnamedFiles(dir: string, names: readonly string[]): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const name of names) {
    if (READ_NAMES.includes(name)) continue;
    const meant = READ_NAMES.find((read) => editDistance(name.toLowerCase(), read, 3) <= 3);
    if (meant === undefined) continue;
    problems.push(
      problemAt(shown(dir, `.ideai/${name}`), 'warning', 'misnamed_file', `not a file the service reads: did you mean ${meant}?`),
    );
  }
  return problems;
}

interface ProjectReport {
  readonly dir: string;
  readonly valid: boolean;
  readonly problems: PolicyProblem[];
}

/** The test file beside the policy, read as `idea-pdp test` reads it: its shape, unknown tools and agents. */
async function testFileProblems(dir: string, read: ProjectInput, staged: boolean): Promise<PolicyProblem[]> {
  const file = shown(dir, TEST_FILE);
  let text: string | null | PolicyProblem;
  try {
    text = await readTestText(dir, staged);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return [problemAt(file, 'error', 'unreadable', (error as Error).message)];
  }
  if (text === null) return [];
  // Staged as a link or a submodule: refused, not read.
  if (typeof text !== 'string') return [text];
  const parsed = parseTestFile(file, text, declaredAgents(read.agents, read.ownPolicy), read.catalog);
  return [...parsed.check.problems, ...moreLine(file, parsed.check.more)];
}

export async function checkCommand(dirs: readonly string[], options: CheckOptions, output: Output): Promise<number> {
  const projects: ProjectReport[] = [];
  let notListed = { errors: 0, warnings: 0 };
  for (const dir of await walkedProjectFolders(dirs)) {
    const read = await readProject(dir, options.staged);
    const policyFile = shown(dir, POLICY_FILE);
    const checked = checkPolicy(policyFile, read.policyText, read.ownPolicy, read.agents, read.catalog);
    const serversFile = shown(dir, SERVERS_FILE);
    const servers = checkServers(serversFile, read.serversText, read.servers);
    let problems = [
      ...(read.policyExists || !options.require ? [] : [problemAt(policyFile, 'error', 'missing_file', 'no policy file (--require)')]),
      ...checked.problems,
      ...moreLine(policyFile, checked.more),
      ...servers.problems,
      ...moreLine(serversFile, servers.more),
      ...agentsProblems(shown(dir, AGENTS_FILE), read.agentsText, read.agents),
      ...read.problems,
      ...misnamedFiles(dir, read.ideaiNames),
      ...(await testFileProblems(dir, read, options.staged)),
    ];
    if (!read.policyExists && !options.require) {
      output.err(
        `idea-pdp check: no ${escapeControls(policyFile)}: the canonical read-only defaults apply (--require makes this an error)\n`,
      );
    }
    if (options.strict) problems = strictly(problems);
    notListed = {
      errors: notListed.errors + checked.more.errors + servers.more.errors + (options.strict ? checked.more.warnings : 0),
      warnings: notListed.warnings + (options.strict ? 0 : checked.more.warnings),
    };
    projects.push({ dir, valid: problems.every((one) => one.severity !== 'error'), problems });
  }
  // The line counting the problems not listed is itself one of the listed ones: it is not counted.
  const listed = projects.flatMap((project) => project.problems).filter((one) => one.code !== 'too_many_problems');
  const errors = listed.filter((one) => one.severity === 'error').length + notListed.errors;
  const warnings = listed.length - listed.filter((one) => one.severity === 'error').length + notListed.warnings;
  if (options.json) {
    output.out(`${JSON.stringify({ valid: errors === 0, errors, warnings, strictWouldFail: warnings, projects }, null, 2)}\n`);
  } else {
    for (const project of projects) for (const one of project.problems) output.out(`${problemLine(one)}\n`);
    const verdict = errors === 0 ? 'valid' : 'invalid';
    const strictNote =
      warnings === 0 ? '' : `; --strict would make ${warnings === 1 ? 'it an error' : `them ${plural(warnings, 'error')}`}`;
    output.out(
      `${verdict}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')} in ${plural(projects.length, 'project')}${strictNote}\n`,
    );
  }
  return errors === 0 ? 0 : 1;
}
