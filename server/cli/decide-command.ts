/** `idea-pdp decide`: the decision `/decide` would answer for one call, offline. */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DecideQuerySchema } from '../../schemas/index.js';
import { NO_EPHEMERAL, decide, lookingApprovals, resolveEffective } from '../domain/decide.js';
import { describeLimit } from '../../schemas/limits.js';
import { outcomeOf } from '../domain/policy-tests.js';
import { projectFolders, projectIdOf, type Output } from './commands.js';
import { readProject } from './project-input.js';
import { UsageError } from './usage.js';

const queryCheck = TypeCompiler.Compile(DecideQuerySchema);

export interface DecideOptions {
  readonly requester: string | undefined;
  readonly tool: string | undefined;
  readonly arguments: string | undefined;
  readonly project: string | undefined;
  readonly failOnDeny: boolean;
  readonly format: string | undefined;
}

export async function decideCommand(dirs: readonly string[], options: DecideOptions, output: Output): Promise<number> {
  if (dirs.length > 1) throw new UsageError('decide takes one DIR');
  if (options.requester === undefined) throw new UsageError('decide needs --requester (an agent id, "" for anonymous)');
  if (options.tool === undefined) throw new UsageError('decide needs --tool');
  if (options.format !== undefined && options.format !== 'json' && options.format !== 'line') {
    throw new UsageError(`--format is json or line, not ${JSON.stringify(options.format)}`);
  }
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
    const where = first?.path ?? '/';
    // What /decide refuses with 400: arguments that are not a JSON object, a tool name or requester too long.
    throw new UsageError(
      `invalid call: ${where.startsWith('/arguments') ? `--arguments must be a JSON object (${first?.message ?? 'invalid'} at ${where})` : `${first?.message ?? 'invalid'} at ${where}`}`,
    );
  }
  const read = await readProject(dir, false);
  const body = decide(query, read.policy, NO_EPHEMERAL, lookingApprovals());
  // Offline there are no counts: a limited tool is decided as if its window were empty (docs/api.md#usage-limits).
  const limit = resolveEffective(query.project, query.requester, read.policy, NO_EPHEMERAL).allowlist?.limits.get(query.tool);
  if (limit !== undefined) {
    output.err(
      `note: ${query.tool} has a usage limit (${describeLimit(limit)}); decide works offline and ignores counts, so this is the decision while the limit is not reached\n`,
    );
  }
  if (options.format === 'line') output.out(`${outcomeOf(body)} ${body.reason} ${body.source}\n`);
  else output.out(`${JSON.stringify(body, null, 2)}\n`);
  return options.failOnDeny && !body.allow ? 1 : 0;
}
