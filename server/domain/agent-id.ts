/**
 * Which agent ids may be written to a policy (docs/api.md §5): the agent id pattern, and nothing a
 * person reading the panel could mistake for another id. Pure.
 */
import { AGENT_ID_REGEX } from '../../schemas/ids.js';

const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/;
const ODD_SPACE = /[^\S ]/;

const codePoint = (character: string): string => `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why `id` cannot be an agent override's id, or undefined when it can. Refused: what the agent id
 * pattern refuses; the anonymous ids `""` and `mcp` (an override for them would never apply);
 * invisible characters (U+200B, bidi controls, variation selectors...); unpaired surrogates;
 * whitespace other than inner spaces; and ids whose NFKC form differs (`ＱＡ` reads as `QA`).
 */
export function agentIdProblem(id: string): string | undefined {
  if (id === '' || id === 'mcp') return `${JSON.stringify(id)} is the anonymous requester: an override for it would never apply`;
  if (!AGENT_ID_REGEX.test(id)) {
    return "an agent id has 1 to 128 characters, no ':', '/', '\\' or control character, and does not start with whitespace";
  }
  const invisible = INVISIBLE.exec(id);
  if (invisible) return `it contains the invisible character ${codePoint(invisible[0])}`;
  if (LONE_SURROGATE.test(id)) return 'it contains an unpaired UTF-16 surrogate';
  const space = ODD_SPACE.exec(id);
  if (space) return `it contains the whitespace character ${codePoint(space[0])} (only inner U+0020 spaces are allowed)`;
  if (id.endsWith(' ')) return 'it ends with a space';
  const normalized = id.normalize('NFKC');
  if (normalized !== id) return `it contains lookalike characters (it reads as ${JSON.stringify(normalized)} in Unicode NFKC form)`;
  return undefined;
}
