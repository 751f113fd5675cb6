#!/usr/bin/env node
/**
 * The `idea-pdp` command (docs/policy-as-code.md): `serve` runs the service, `check`, `test`,
 * `decide`, `preview` and `fmt` run its parser and decision function on project folders, offline. Each
 * command's module is loaded only when it runs: `check` never loads Fastify or the panel.
 */
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { escapeControls } from '../../schemas/display.js';
import type { Output } from './commands.js';
import { CHECK_HELP, DECIDE_HELP, FMT_HELP, MAIN_HELP, PREVIEW_HELP, SERVE_HELP, TEST_HELP, UsageError } from './usage.js';

/** Every line printed shows the controls and bidirectional characters of the data it holds as escapes, whatever the format. */
const printable = (text: string): string => text.split('\n').map(escapeControls).join('\n');

const output: Output = {
  out: (text) => process.stdout.write(printable(text)),
  err: (text) => process.stderr.write(printable(text)),
};

const HELP = { serve: SERVE_HELP, check: CHECK_HELP, test: TEST_HELP, decide: DECIDE_HELP, preview: PREVIEW_HELP, fmt: FMT_HELP } as const;
type Command = keyof typeof HELP;
const isCommand = (name: string | undefined): name is Command => name !== undefined && Object.hasOwn(HELP, name);

function version(): string {
  // package.json sits two levels above this file, from sources (server/cli) or built (dist/server/cli): three then.
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const parsed = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'idea-mcp-tool-permissions' && parsed.version !== undefined) return parsed.version;
    } catch {
      // Not this one.
    }
  }
  return 'unknown';
}

/** `--coverage-min <percent>`: a number from 0 to 100 (a trailing % is taken). */
function coverageMinimum(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text.endsWith('%') ? text.slice(0, -1) : text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 100)
    throw new UsageError(`--coverage-min is a percent from 0 to 100, not ${JSON.stringify(text)}`);
  return value;
}

/** Every option of every command, as parseArgs reads them; {@link ALLOWED} says which command takes which. */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
  strict: { type: 'boolean' },
  require: { type: 'boolean' },
  staged: { type: 'boolean' },
  project: { type: 'string' },
  requester: { type: 'string' },
  tool: { type: 'string' },
  arguments: { type: 'string' },
  format: { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  run: { type: 'string' },
  coverage: { type: 'boolean' },
  'coverage-min': { type: 'string' },
  'fail-on-deny': { type: 'boolean' },
  server: { type: 'string' },
  check: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

type Option = keyof typeof OPTIONS;
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>['values'];

/** The options each command takes besides `--help`. */
const ALLOWED: Record<Command, readonly Option[]> = {
  serve: [],
  check: ['json', 'strict', 'require', 'staged'],
  test: ['json', 'project', 'strict', 'require', 'staged', 'format', 'verbose', 'run', 'coverage', 'coverage-min'],
  decide: ['project', 'requester', 'tool', 'arguments', 'fail-on-deny', 'format'],
  preview: ['server', 'project', 'json'],
  fmt: ['check'],
};

async function run(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    output.out(MAIN_HELP);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    output.out(`${version()}\n`);
    return 0;
  }
  if (!isCommand(name)) throw new UsageError(name === undefined ? 'a command is needed' : `unknown command: ${name}`);
  const { values, positionals } = parseArgs({ args: [...rest], allowPositionals: true, strict: true, options: OPTIONS });
  if (values.help === true) {
    output.out(HELP[name]);
    return 0;
  }
  const extra = Object.keys(values).find((option) => !(ALLOWED[name] as readonly string[]).includes(option));
  if (extra !== undefined) throw new UsageError(`${name} takes no --${extra}`);
  return runCommand(name, values, positionals);
}

/** Runs one command with the options it takes, loading its module only then. */
async function runCommand(name: Command, values: Values, positionals: string[]): Promise<number> {
  switch (name) {
    case 'serve':
      if (positionals.length > 0) throw new UsageError('serve takes no argument (configure it with PDP_* variables)');
      // Resolves once the service listens; its server keeps the process alive until SIGTERM.
      await import('./serve-command.js').then(({ serveCommand }) => serveCommand(output));
      return 0;
    case 'check': {
      const { checkCommand } = await import('./offline-commands.js');
      const options = {
        strict: values.strict === true,
        json: values.json === true,
        require: values.require === true,
        staged: values.staged === true,
      };
      return checkCommand(positionals, options, output);
    }
    case 'test': {
      const { testCommand } = await import('./offline-commands.js');
      return testCommand(positionals, testOptions(values), output);
    }
    case 'decide': {
      const { decideCommand } = await import('./offline-commands.js');
      const options = {
        requester: values.requester,
        tool: values.tool,
        arguments: values.arguments,
        project: values.project,
        failOnDeny: values['fail-on-deny'] === true,
        format: values.format,
      };
      return decideCommand(positionals, options, output);
    }
    case 'preview': {
      const { previewCommand } = await import('./offline-commands.js');
      return previewCommand(positionals, { server: values.server, project: values.project, json: values.json === true }, output);
    }
    case 'fmt': {
      const { fmtCommand } = await import('./offline-commands.js');
      return fmtCommand(positionals, { check: values.check === true }, output);
    }
  }
}

/** `test`'s options: `--json` is `--format json`, and the format is one of four. */
function testOptions(values: Values) {
  if (values.json === true && values.format !== undefined && values.format !== 'json') throw new UsageError('--json is --format json');
  const format = values.json === true ? 'json' : (values.format ?? 'lines');
  if (format !== 'json' && format !== 'tap' && format !== 'junit' && format !== 'lines')
    throw new UsageError('--format is one of tap, junit, json');
  return {
    format,
    project: values.project,
    verbose: values.verbose === true,
    run: values.run,
    coverage: values.coverage === true,
    coverageMin: coverageMinimum(values['coverage-min']),
    require: values.require === true,
    strict: values.strict === true,
    staged: values.staged === true,
  } as const;
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    // parseArgs reports an unknown option or a missing value with a TypeError coded ERR_PARSE_ARGS_*.
    const code = (error as { code?: unknown }).code;
    // By name: the offline commands are a bundle with its own copy of the UsageError class.
    const usage = error instanceof UsageError || (error instanceof Error && error.name === 'UsageError');
    if (usage || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      // Node's own text for an unknown option ends on an unbalanced quote: the option is named plainly.
      const unknown = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /Unknown option '([^']*)'/.exec((error as Error).message)?.[1] : undefined;
      const message = unknown === undefined ? (error as Error).message : `unknown option ${unknown}`;
      output.err(`idea-pdp: ${escapeControls(message)}\nRun \`idea-pdp --help\` for usage.\n`);
      process.exitCode = 2;
      return;
    }
    output.err(`idea-pdp: ${escapeControls(error instanceof Error ? error.message : String(error))}\n`);
    process.exitCode = 1;
  },
);
