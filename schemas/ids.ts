/**
 * The patterns of the identifiers the service accepts, without TypeBox: the entry point reads its
 * configuration and starts the watcher thread with them before it loads the schema library (see
 * server/main.ts), and the watcher thread never loads it.
 */

/** Project ids: also the folder names under `PDP_PROJECTS_ROOT`. */
export const PROJECT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
/** Agent ids: no whitespace first, no `:`, `/` or `\`, no control characters, 1 to 128 characters. */
export const AGENT_ID_PATTERN = '^[^\\s:/\\\\\\u0000-\\u001f\\u007f][^:/\\\\\\u0000-\\u001f\\u007f]{0,127}$';

export const PROJECT_ID_REGEX = new RegExp(PROJECT_ID_PATTERN);
// No `u` flag: TypeBox compiles a schema's `pattern` without it, so the policy file's check and
// every other check of an agent id count the 128 in UTF-16 code units (an emoji counts 2). With
// different counts, a write could accept an id that makes the file it wrote invalid.
export const AGENT_ID_REGEX = new RegExp(AGENT_ID_PATTERN);
