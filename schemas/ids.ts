/**
 * The patterns of the identifiers the service accepts, and the one order of ids, as plain regular
 * expressions: schemas/policy.ts builds its TypeBox schemas from these patterns, and the code that
 * only tests or sorts an id (configuration, requester grammar, registry) needs no schema.
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

/**
 * Invisible characters (Unicode format and default-ignorable: U+200B, U+FEFF, bidi controls,
 * variation selectors, tags, fillers), as a pattern without the `u` flag: astral ones are written
 * as surrogate pairs. Checked against the running Node's `\p{Cf}` and
 * `\p{Default_Ignorable_Code_Point}` by test/domain/agent-id.test.ts.
 */
export const INVISIBLE_CHARACTER_SOURCE =
  '[\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f' +
  '\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb]' +
  '|\\ud804[\\udcbd\\udccd]|\\ud80d[\\udc30-\\udc3f]|\\ud82f[\\udca0-\\udca3]|\\ud834[\\udd73-\\udd7a]|[\\udb40-\\udb43][\\udc00-\\udfff]';
/** A UTF-16 surrogate without its other half. */
const LONE_SURROGATE_SOURCE = '[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?:^|[^\\ud800-\\udbff])[\\udc00-\\udfff]';
/** U+FFFD, which a body's bytes that are not UTF-8 decode to: `QA\xff` must not be an agent of its own. */
const REPLACEMENT_CHARACTER_SOURCE = '\\ufffd';
/** Whitespace other than U+0020 anywhere, or a space at the end (a leading one is refused by the agent id pattern). */
const ODD_SPACE_SOURCE = '[^\\S ]| $';

/**
 * Agent ids a policy document may hold: the agent id pattern, minus the reserved anonymous id
 * `mcp` (an override for it would never apply), invisible characters, lone surrogates, U+FFFD and
 * whitespace other than inner spaces. Lookalikes that are not in NFKC form (`ＱＡ`) cannot be said
 * in a pattern: the service refuses them too (server/domain/agent-id.ts).
 */
// The agent id pattern first, in a lookahead, so the scan for invisible characters never runs over more than 128 code units.
export const WRITABLE_AGENT_ID_PATTERN = `^(?=${AGENT_ID_PATTERN.slice(1)})(?!mcp$)(?![\\s\\S]*(?:${INVISIBLE_CHARACTER_SOURCE}|${LONE_SURROGATE_SOURCE}|${REPLACEMENT_CHARACTER_SOURCE}|${ODD_SPACE_SOURCE}))`;
// eslint-disable-next-line no-misleading-character-class -- surrogate halves are matched on purpose, without the 'u' flag like TypeBox.
export const WRITABLE_AGENT_ID_REGEX = new RegExp(WRITABLE_AGENT_ID_PATTERN);

/** The one order of ids in every list the service answers or writes: by UTF-16 code units, like `<`. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
