/**
 * Which strings are agent ids (docs/api.md#agent-ids): the agent id pattern, and nothing a
 * person reading the panel or a log could mistake for another id. One rule for the ids a policy
 * may hold and for the requesters /decide reads as agents, so a lookalike of an agent (`QA\u200b`,
 * `ＱＡ`, `QА` with a Cyrillic А) is never a separate agent given the project default. Pure, no
 * TypeBox at run time, like ids.ts.
 */
import { AGENT_ID_REGEX } from './ids.js';

const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/;
const ODD_SPACE = /[^\S ]/;
/** Anything outside printable ASCII: ids made only of it (almost all) skip the Unicode checks. */
const NOT_ASCII = /[^\u0020-\u007e]/;
/** Scripts whose capitals and small letters copy Latin ones (А, В, Е, К, М, Н, О, Р, С, Т, Х, Α, Β, Ε...). */
const LOOKALIKE_SCRIPTS = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
] as const;

const codePoint = (character: string): string => `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why `id` cannot be an agent id, or undefined when it can. Refused: what the agent id pattern
 * refuses; the anonymous ids `""` and `mcp`; invisible characters (U+200B, bidi controls,
 * variation selectors...); unpaired surrogates; U+FFFD; whitespace other than inner spaces; ids whose NFKC
 * form differs (`ＱＡ` reads as `QA`); and letters of more than one of Latin, Cyrillic and Greek
 * in one id (`QА`).
 */
export function agentIdProblem(id: string): string | undefined {
  if (id === '' || id === 'mcp') return `${JSON.stringify(id)} is the anonymous requester: an override for it would never apply`;
  if (!AGENT_ID_REGEX.test(id)) {
    return "an agent id has 1 to 128 characters, no ':', '/', '\\' or control character, and does not start with whitespace";
  }
  if (id.endsWith(' ')) return 'it ends with a space';
  if (!NOT_ASCII.test(id)) return undefined;
  const invisible = INVISIBLE.exec(id);
  if (invisible) return `it contains the invisible character ${codePoint(invisible[0])}`;
  if (LONE_SURROGATE.test(id)) return 'it contains an unpaired UTF-16 surrogate';
  if (id.includes('\ufffd')) return 'it contains U+FFFD, the replacement character of bytes that were not UTF-8';
  const space = ODD_SPACE.exec(id);
  if (space) return `it contains the whitespace character ${codePoint(space[0])} (only inner U+0020 spaces are allowed)`;
  const normalized = id.normalize('NFKC');
  if (normalized !== id) return `it contains lookalike characters (it reads as ${JSON.stringify(normalized)} in Unicode NFKC form)`;
  const scripts = LOOKALIKE_SCRIPTS.filter(([, letters]) => letters.test(id)).map(([name]) => name);
  if (scripts.length > 1) return `it mixes ${scripts.join(' and ')} letters, which look alike (mixed-script lookalike)`;
  return undefined;
}
