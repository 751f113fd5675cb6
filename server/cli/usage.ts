/** The help texts of `idea-pdp` and its commands, and the usage error (exit code 2). */

export class UsageError extends Error {
  override name = 'UsageError';
}

export const MAIN_HELP = `Usage: idea-pdp <command> [options]

The IdeA MCP tool permission service and its policy-as-code tools (offline, no server needed).

Commands:
  serve                  run the service (configured by the PDP_* environment variables)
  check [DIR...]         validate .ideai/mcp-tool-permissions.json and .ideai/agents.json
  test [DIR...]          run the expectations of .ideai/mcp-tool-permissions.test.json
  decide DIR --requester R --tool T [--arguments JSON]
                         print the decision /decide would answer (without decisionId)
  preview OLD NEW        what a new policy file changes (or NEW --server URL --project P)
  fmt [--check] [DIR...] write each policy file in its canonical form (--check: only say which are not)

Options: --help on every command, --version.
Exit codes: 0 success, 1 a problem found (invalid file, failing case), 2 usage error.
In CI and hooks: idea-pdp check --strict --require && idea-pdp test --strict --require
`;

export const SERVE_HELP = `Usage: idea-pdp serve

Runs the policy decision service, as \`npm start\` does. Configured by the environment:
  PDP_HOST (127.0.0.1), PDP_PORT (8787), PDP_PROJECTS_ROOT or PDP_PROJECTS (id=/abs/path,...),
  PDP_ADMIN_TOKEN[_FILE], PDP_DECIDE_TOKEN[_FILE], PDP_STATE_DIR, PDP_AUDIT_FILE,
  PDP_APPROVAL_TTL_SECONDS, PDP_MAX_CONNECTIONS, PDP_LOG_LEVEL.
Without PDP_PROJECTS_ROOT or PDP_PROJECTS it serves copies of the demo projects made in
PDP_STATE_DIR/demo-projects. PDP_STATE_DIR (default $XDG_STATE_HOME/idea-pdp, else
~/.local/state/idea-pdp) holds the admin token: nothing is written where serve is started.
Stops gracefully on SIGTERM or SIGINT.
`;

export const CHECK_HELP = `Usage: idea-pdp check [DIR...] [--strict] [--require] [--staged] [--json]

Validates the policy file, the agents file and the test file of each project folder DIR (default: .)
exactly as the service and idea-pdp test read them. A DIR that holds no .ideai/ folder is walked for the
projects under it (not node_modules, .git or hidden folders), so check . covers a whole repository. Prints every problem of every file, in file order,
  <file>:<line>:<column>: <error|warning> <code>: <message>
then a summary line. A missing file is valid (the canonical defaults).

  --strict   warnings (unknown tool names, unknown agents, misnamed files, an agents file the
             service cannot list) are errors
  --require  a missing policy file is an error
  --staged   check what git's index holds (git show :path), as a pre-commit hook should;
             a file or .ideai staged as a link or a submodule is an error (staged_link)
  --json     print one JSON document instead of lines

Exit: 0 every file valid, 1 a file invalid, 2 usage error.
`;

export const TEST_HELP = `Usage: idea-pdp test [DIR...] [--project ID] [--strict] [--require] [--staged]
                   [--format tap|junit|json] [--json] [-v] [--run TEXT] [--coverage]
                   [--coverage-min PERCENT]

Runs the cases of DIR/.ideai/mcp-tool-permissions.test.json (default DIR: .) against the policy
file beside it, with the service's decision function:
  { "version": 1, "cases": [ { "requester": "QA", "tool": "idea_memory_write",
    "expect": "allow" | "deny" | "ask", "arguments"?: { "issueRef": "#12" }, "name"?: "..." } ] }
Prints one line per failing case, then "N passed, M failed". With an invalid policy, its errors
are printed once and no case is run (each fails as not run).

  --project ID   the project id the cases are decided in (default: the folder's name)
  --strict       warnings of the test file (unknown tools, unknown agents) fail the run
  --require      a missing test file is a failure
  --staged       run what git's index holds (git show :path); links are refused as for check
  --format F     tap, junit (XML) or json; --json is --format json
  -v, --verbose  print every case with its decision
  --run TEXT     only the cases whose name, requester or tool contains TEXT
  --coverage     list the agents × write tools no case exercises (in every format)
  --coverage-min PERCENT
                 fail the run when fewer pairs than this are exercised
A case that cannot be read is reported as a failure and the file's other cases still run. Every
format counts the same tests: each case, plus each error beyond the cases (a file that cannot be
read, a missing file with --require, a warning with --strict, coverage below --coverage-min).

Exit: 0 all cases pass, 1 otherwise, 2 usage error.
`;

export const DECIDE_HELP = `Usage: idea-pdp decide DIR --requester R --tool T [--arguments JSON] [--project ID]
                     [--format json|line] [--fail-on-deny]

Prints the decision the service would answer for this call in the project folder DIR (the
/decide body without decisionId). A tool on ask answers approval_required; no request is opened
and no temporary grant is consulted.

  --requester R    an agent id, "" or "mcp" (anonymous), or ticket-assistant:<project>:<issue>
  --tool T         the tool name
  --arguments JSON the call's arguments, as /decide takes them: an object whose values are
                   scalars, or arrays or objects of scalars, e.g. '{"issueRef":"#12"}'
  --project ID     the project id (default: the folder's name)
  --format line    print "allow|deny|ask <reason> <source>" instead of JSON
  --fail-on-deny   exit 1 when the call is not allowed (ask included)

Exit: 0 (whatever the decision, unless --fail-on-deny), 1 denied with --fail-on-deny, 2 usage error.
`;

export const PREVIEW_HELP = `Usage: idea-pdp preview OLD NEW [--json]
       idea-pdp preview NEW --server URL --project P [--json]

What the policy file NEW changes, for a reviewer: one line per agent whose effective policy changes
(tools added and removed, put on or taken off ask, each condition's before -> after), then how many
change. Offline, against the policy file OLD. Against a running service: sends NEW to URL's preview
route for project P and also prints its replay of the project's recent decisions (the token is read
from PDP_DECIDE_TOKEN or PDP_DECIDE_TOKEN_FILE). Nothing is written.
OLD or NEW may be - (stdin) or any readable file, a pipe or <(git show main:.ideai/mcp-tool-permissions.json)
included, up to 4 MiB.

  --json   print the document ({ "valid", "errors", "agents" }, the route's whole answer with --server)

Exit: 0 NEW is valid, 1 NEW is invalid or the service refused, 2 usage error.
`;

export const FMT_HELP = `Usage: idea-pdp fmt [--check] [DIR...]

Writes the policy file of each project folder DIR (default: .) in the canonical form the service
writes: 2-space JSON, tools in catalog order (unknown names after them), agents by id, keys in the
documented order. Running it twice changes nothing. A file that is invalid (idea-pdp check says why),
a link or not a regular file is left as it is and counts as a failure.
  --check   write nothing; print each file that is not formatted and exit 1 if there is one
Exit codes: 0 all formatted, 1 a file not formatted (--check) or that cannot be, 2 usage error.
`;
