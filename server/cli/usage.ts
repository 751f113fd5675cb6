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

Options: --help on every command, --version.
Exit codes: 0 success, 1 a problem found (invalid file, failing case), 2 usage error.
`;

export const SERVE_HELP = `Usage: idea-pdp serve

Runs the policy decision service, as \`npm start\` does. Configured by the environment:
  PDP_HOST (127.0.0.1), PDP_PORT (8787), PDP_PROJECTS_ROOT or PDP_PROJECTS (id=/abs/path,...),
  PDP_ADMIN_TOKEN[_FILE], PDP_DECIDE_TOKEN[_FILE], PDP_STATE_DIR (.pdp), PDP_AUDIT_FILE,
  PDP_APPROVAL_TTL_SECONDS, PDP_MAX_CONNECTIONS, PDP_LOG_LEVEL.
Stops gracefully on SIGTERM or SIGINT.
`;

export const CHECK_HELP = `Usage: idea-pdp check [DIR...] [--strict] [--json]

Validates the policy file and the agents file of each project folder DIR (default: .) exactly as
the service reads them. Prints one line per problem,
  <file>:<line>:<column>: <error|warning> <code>: <message>
then a summary line. A missing file is valid (the canonical defaults).

  --strict   warnings (unknown tool names, an agents file the service cannot list) are errors
  --json     print one JSON document instead of lines

Exit: 0 every file valid, 1 a file invalid, 2 usage error.
`;

export const TEST_HELP = `Usage: idea-pdp test [DIR...] [--project ID] [--json]

Runs the cases of DIR/.ideai/mcp-tool-permissions.test.json (default DIR: .) against the policy
file beside it, with the service's decision function:
  { "version": 1, "cases": [ { "requester": "QA", "tool": "idea_memory_write",
    "expect": "allow" | "deny" | "ask", "arguments"?: { "issueRef": "#12" }, "name"?: "..." } ] }
Prints one line per failing case, then "N passed, M failed". With an invalid policy every case
fails (policy_invalid).

  --project ID   the project id the cases are decided in (default: the folder's name)
  --json         print one JSON document instead of lines

Exit: 0 all cases pass, 1 otherwise, 2 usage error.
`;

export const DECIDE_HELP = `Usage: idea-pdp decide DIR --requester R --tool T [--arguments JSON] [--project ID]

Prints, as JSON, the decision the service would answer for this call in the project folder DIR
(the /decide body without decisionId). A tool on ask answers approval_required; no request is
opened and no temporary grant is consulted.

  --requester R    an agent id, "" or "mcp" (anonymous), or ticket-assistant:<project>:<issue>
  --tool T         the tool name
  --arguments JSON the call's arguments, e.g. '{"issueRef":"#12"}'
  --project ID     the project id (default: the folder's name)

Exit: 0 (whatever the decision), 2 usage error.
`;
