/**
 * How the panel shows an agent so the user grants the agent `/decide` will see: its id next to its
 * name, and warnings for names or ids that mislead a reader (a duplicate name, an invisible
 * character, a lookalike such as `ＱＡ` or a Cyrillic `А`). Pure, unit-tested without a browser.
 */

export interface AgentIdentity {
  agentId: string;
  name: string;
}

export interface AgentFlag {
  kind: 'duplicate-name' | 'invisible' | 'lookalike';
  text: string;
}

/** Characters that render as nothing (or as a plain space) and so hide a difference. */
function isInvisible(char: string): boolean {
  if (char === ' ') return false;
  return /[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u.test(char);
}

/** Letters of other scripts drawn like Latin ones (the most common confusables, not a full table). */
const HOMOGLYPHS: Readonly<Record<string, string>> = {
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  У: 'Y',
  Ѕ: 'S',
  І: 'I',
  Ј: 'J',
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ј: 'j',
  ԁ: 'd',
  һ: 'h',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
  ο: 'o',
  ν: 'v',
};

/** The ASCII text a lookalike character is read as, or null when it is not one. */
function lookalikeOf(char: string): string | null {
  if (/^[\x20-\x7e]$/.test(char) || isInvisible(char)) return null;
  const mapped = HOMOGLYPHS[char];
  if (mapped !== undefined) return mapped;
  const compatible = char.normalize('NFKC');
  return compatible !== char && /^[\x20-\x7e]+$/.test(compatible) ? compatible : null;
}

const codePoint = (char: string): string => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** The text as a reader would take it: invisible characters dropped, lookalikes read as ASCII. */
export function skeleton(text: string): string {
  return Array.from(text, (char) => (isInvisible(char) ? '' : (lookalikeOf(char) ?? char))).join('');
}

/** The text with each invisible character written out (`QA⟨U+200B⟩`), so it can be seen. */
export function visibleText(text: string): string {
  return Array.from(text, (char) => (isInvisible(char) ? `⟨${codePoint(char)}⟩` : char)).join('');
}

function characterFlags(label: string, text: string): AgentFlag[] {
  // Code points on purpose: each invisible or lookalike character is judged alone.
  const chars = Array.from(text);
  const invisible = chars.filter(isInvisible);
  const lookalikes = chars.filter((char) => lookalikeOf(char) !== null);
  const flags: AgentFlag[] = [];
  if (invisible.length > 0) {
    flags.push({ kind: 'invisible', text: `Caractère invisible dans ${label} (${invisible.map(codePoint).join(' ')})` });
  }
  if (lookalikes.length > 0) {
    flags.push({
      kind: 'lookalike',
      text: `Caractères trompeurs dans ${label} (${lookalikes.map(codePoint).join(' ')}) : se lit « ${skeleton(text)} »`,
    });
  }
  return flags;
}

/** The warnings of every agent of a list, by agent id (an agent without warning has none). */
export function agentFlags(agents: readonly AgentIdentity[]): Map<string, AgentFlag[]> {
  const flags = new Map<string, AgentFlag[]>();
  for (const agent of agents) {
    const own = characterFlags('l\u2019identifiant', agent.agentId);
    if (agent.name !== agent.agentId) own.push(...characterFlags('le nom', agent.name));
    const read = skeleton(agent.name);
    const others = agents.filter(
      (other) => other.agentId !== agent.agentId && (skeleton(other.name) === read || skeleton(other.agentId) === read),
    );
    if (others.length > 0) {
      const ids = others.map((other) => visibleText(other.agentId)).join(', ');
      own.push({ kind: 'duplicate-name', text: `Nom en double : « ${visibleText(agent.name)} » désigne aussi l\u2019agent ${ids}` });
    }
    if (own.length > 0) flags.set(agent.agentId, dedupe(own));
  }
  return flags;
}

function dedupe(flags: AgentFlag[]): AgentFlag[] {
  const seen = new Set<string>();
  return flags.filter((flag) => {
    if (seen.has(flag.text)) return false;
    seen.add(flag.text);
    return true;
  });
}

/**
 * Why no override may be written for this id, or null: the service treats a policy file holding
 * such an id as invalid, so the panel never sends one.
 */
export function overrideRefusal(agentId: string): string | null {
  if (agentId === '' || agentId === 'mcp') return `l\u2019identifiant « ${agentId} » est réservé aux appels anonymes`;
  const flags = characterFlags('l\u2019identifiant', agentId);
  return flags.length === 0 ? null : flags.map((flag) => flag.text).join(' ; ');
}

/** Whether the id must be shown beside the name: always, unless the name is exactly the id and unflagged. */
export function showsId(agent: AgentIdentity, flagged: boolean): boolean {
  return flagged || agent.name !== agent.agentId;
}
