/**
 * `idea-pdp check`, `test` and `decide`: the service's own reading, compiling and decision code
 * run on project folders, offline. Each returns its exit code and writes to the streams it is given.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { DecideQuerySchema, type PolicyProblem } from '../../schemas/index.js';
import { NO_EPHEMERAL, decide, lookingApprovals } from '../domain/decide.js';
import { AGENTS_FILE, POLICY_FILE, TEST_FILE, agentsProblems, policyProblems, problemLine, strictly } from '../domain/policy-check.js';
import { failureLine, parseTestFile, runCases, type CaseResult } from '../domain/policy-tests.js';
import { readCompiledProject } from '../projects/compiled-files.js';
import { MAX_FILE_BYTES } from '../projects/file-read.js';
import { UsageError } from './usage.js';

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** Each DIR must be a folder: anything else is a usage error, not a project without files. */
async function projectFolders(dirs: readonly string[]): Promise<string[]> {
  const folders = dirs.length === 0 ? ['.'] : [...dirs];
  for (const dir of folders) {
    const stats = await fs.stat(dir).catch(() => undefined);
    if (!stats?.isDirectory()) throw new UsageError(`not a folder: ${dir}`);
  }
  return folders;
}

/** How a file of DIR is named in the output: relative to the current folder. */
const shown = (dir: string, file: string): string => path.relative(process.cwd(), path.resolve(dir, file)) || file;

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

export async function checkCommand(dirs: readonly string[], options: { strict: boolean; json: boolean }, output: Output): Promise<number> {
  const projects: { dir: string; valid: boolean; problems: PolicyProblem[] }[] = [];
  for (const dir of await projectFolders(dirs)) {
    const read = await readCompiledProject(dir);
    let problems = [
      ...policyProblems(shown(dir, POLICY_FILE), read.policyText, read.policy),
      ...agentsProblems(shown(dir, AGENTS_FILE), read.agentsText, read.agents),
    ];
    if (options.strict) problems = strictly(problems);
    projects.push({ dir, valid: problems.every((one) => one.severity !== 'error'), problems });
  }
  const all = projects.flatMap((project) => project.problems);
  const errors = all.filter((one) => one.severity === 'error').length;
  const warnings = all.length - errors;
  if (options.json) {
    output.out(`${JSON.stringify({ valid: errors === 0, errors, warnings, projects }, null, 2)}\n`);
  } else {
    for (const one of all) output.out(`${problemLine(one)}\n`);
    const verdict = errors === 0 ? 'valid' : 'invalid';
    output.out(`${verdict}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')} in ${plural(projects.length, 'project')}\n`);
  }
  return errors === 0 ? 0 : 1;
}

/** The project id a folder is decided in: `--project`, else the folder's own name (as under PDP_PROJECTS_ROOT). */
async function projectIdOf(dir: string, project: string | undefined): Promise<string> {
  return project ?? path.basename(await fs.realpath(dir));
}

interface CaseReport {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly name?: string;
  readonly requester: string;
  readonly tool: string;
  readonly expect: string;
  readonly got: string;
  readonly reason: string;
  readonly message: string;
  readonly passed: boolean;
}

function caseReport(file: string, result: CaseResult): CaseReport {
  const { testCase, line, column } = result.located;
  return {
    file,
    line,
    column,
    ...(testCase.name === undefined ? {} : { name: testCase.name }),
    requester: testCase.requester,
    tool: testCase.tool,
    expect: testCase.expect,
    got: result.got,
    reason: result.reason,
    message: result.message,
    passed: result.passed,
  };
}

export async function testCommand(
  dirs: readonly string[],
  options: { json: boolean; project?: string | undefined },
  output: Output,
): Promise<number> {
  const cases: CaseReport[] = [];
  const problems: PolicyProblem[] = [];
  const lines: string[] = [];
  for (const dir of await projectFolders(dirs)) {
    const file = shown(dir, TEST_FILE);
    const text = await readTestFile(path.join(dir, TEST_FILE));
    if (text === null) {
      output.err(`idea-pdp test: no ${file}: nothing to run\n`);
      continue;
    }
    const parsed = parseTestFile(file, text);
    if ('problem' in parsed) {
      problems.push(parsed.problem);
      lines.push(problemLine(parsed.problem));
      continue;
    }
    const read = await readCompiledProject(dir);
    if (read.policy.status === 'invalid') {
      for (const one of policyProblems(shown(dir, POLICY_FILE), read.policyText, read.policy)) output.err(`${problemLine(one)}\n`);
    }
    for (const result of runCases(await projectIdOf(dir, options.project), read.policy, parsed.cases)) {
      cases.push(caseReport(file, result));
      if (!result.passed) lines.push(failureLine(file, result));
    }
  }
  const passed = cases.filter((one) => one.passed).length;
  // An unusable test file counts as one failure: the run did not check what it was meant to.
  const failed = cases.length - passed + problems.length;
  if (options.json) output.out(`${JSON.stringify({ passed, failed, cases, problems }, null, 2)}\n`);
  else {
    for (const line of lines) output.out(`${line}\n`);
    output.out(`${passed} passed, ${failed} failed\n`);
  }
  return failed === 0 ? 0 : 1;
}

/**
 * The test file's text, or null when there is none. Only a regular file up to the size of a policy
 * file is read, opened non-blocking: a link to `/dev/zero` or `/dev/stdin` must not hang a CI job.
 */
async function readTestFile(file: string): Promise<string | null> {
  let handle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return null;
    // ENXIO: a socket (the `/dev/stdin` of a process that Node started, for one).
    throw code === 'ENXIO' ? notRegular(file) : error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(file);
    if (stats.size > MAX_FILE_BYTES)
      throw new Error(`${file}: larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; idea-pdp test reads smaller files only`);
    // The size just checked, even if the file grows meanwhile.
    const bytes = Buffer.alloc(stats.size);
    let filled = 0;
    for (let read = -1; read !== 0 && filled < bytes.length; filled += read) {
      read = (await handle.read(bytes, filled, bytes.length - filled, filled)).bytesRead;
    }
    return bytes.toString('utf8', 0, filled);
  } finally {
    await handle.close();
  }
}

const notRegular = (file: string): Error =>
  new Error(`${file}: not a regular file (a folder, a device, a pipe or a socket); idea-pdp test reads regular files only`);

const queryCheck = TypeCompiler.Compile(DecideQuerySchema);

export interface DecideOptions {
  readonly requester: string | undefined;
  readonly tool: string | undefined;
  readonly arguments: string | undefined;
  readonly project: string | undefined;
}

export async function decideCommand(dirs: readonly string[], options: DecideOptions, output: Output): Promise<number> {
  if (dirs.length > 1) throw new UsageError('decide takes one DIR');
  if (options.requester === undefined) throw new UsageError('decide needs --requester (an agent id, "" for anonymous)');
  if (options.tool === undefined) throw new UsageError('decide needs --tool');
  let args: unknown;
  if (options.arguments !== undefined) {
    try {
      args = JSON.parse(options.arguments);
    } catch {
      throw new UsageError('--arguments is not JSON');
    }
  }
  const [dir = '.'] = await projectFolders(dirs);
  const query = {
    project: await projectIdOf(dir, options.project),
    requester: options.requester,
    tool: options.tool,
    ...(args === undefined ? {} : { arguments: args }),
  };
  if (!queryCheck.Check(query)) {
    const first = queryCheck.Errors(query).First();
    throw new UsageError(`invalid call: ${first?.message ?? 'invalid'} at ${first?.path ?? '/'}`);
  }
  const read = await readCompiledProject(dir);
  output.out(`${JSON.stringify(decide(query, read.policy, NO_EPHEMERAL, lookingApprovals()), null, 2)}\n`);
  return 0;
}
