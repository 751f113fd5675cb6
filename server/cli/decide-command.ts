/** `idea-pdp decide`: the decision `/decide` would answer for one call, offline. */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DecideQuerySchema } from '../../schemas/index.js';
import { describeLimit } from '../../schemas/limits.js';
import { parseRequester, quoteForMessage } from '../../schemas/requester.js';
import type { AgentsFileState } from '../domain/agents-file.js';
import type { CompiledPolicy } from '../domain/compile.js';
import { unknownTool } from '../domain/policy-check.js';
import type { ProjectCatalog } from '../domain/project-catalog.js';
import { NO_EPHEMERAL, NO_GRANTS, decide, lookingVerdict, resolveEffective } from '../domain/decide.js';
import { outcomeOf } from '../domain/policy-tests.js';
import { didYouMean } from '../domain/suggest.js';
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

/**
 * What a typo in --requester or --tool would otherwise hide behind a plausible answer (`allow` from the
 * project default for an agent that does not exist): said on stderr, the answer on stdout unchanged.
 */
function callWarnings(requester: string, tool: string, policy: CompiledPolicy, agents: AgentsFileState, catalog: ProjectCatalog): string[] {
  const warnings: string[] = [];
  const overrides = policy.status === 'ok' ? [...policy.overrides.keys()] : [];
  if (parseRequester(requester).kind === 'agent' && !overrides.includes(requester)) {
    const declared = agents.agents.map((agent) => agent.id);
    const known = [...new Set([...declared, ...overrides])];
    if (agents.exists && !declared.includes(requester))
      warnings.push(
        `unknown_agent: agent ${quoteForMessage(requester)} is not declared in .ideai/agents.json${didYouMean(requester, known, false)}`,
      );
    else if (!agents.exists && didYouMean(requester, overrides, false) !== '')
      warnings.push(`unknown_agent: agent ${quoteForMessage(requester)} has no override${didYouMean(requester, overrides, false)}`);
  }
  if (catalog.find(tool) === undefined) {
    const { why, hint } = unknownTool(tool, catalog);
    warnings.push(`unknown_tool: unknown tool ${quoteForMessage(tool)}: ${why}${hint}`);
  }
  return warnings;
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
  for (const warning of callWarnings(query.requester, query.tool, read.ownPolicy, read.agents, read.catalog))
    output.err(`idea-pdp: warning ${warning}\n`);
  const { body } = lookingVerdict(decide(query, read.policy, NO_EPHEMERAL, NO_GRANTS));
  // Offline there are no counts: a limited tool is decided as if its window were empty (docs/api.md#usage-limits).
  const limit = resolveEffective(query.project, query.requester, read.policy, NO_EPHEMERAL).allowlist?.limits.get(query.tool);
  if (limit !== undefined) {
    output.err(
      `note: ${query.tool} has a usage limit (${describeLimit(limit)}); decide works offline and ignores counts, so this is the decision while the limit is not reached\n`,
    );
  }
  // The refused argument's name (never its value) tells a script which condition said no.
  const argument = body.argument === undefined ? '' : ` argument=${body.argument}`;
  if (options.format === 'line') output.out(`${outcomeOf(body)} ${body.reason} ${body.source}${argument}\n`);
  else output.out(`${JSON.stringify(body, null, 2)}\n`);
  return options.failOnDeny && !body.allow ? 1 : 0;
}
