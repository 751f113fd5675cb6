/**
 * The panel's pure logic without a browser: French errors for every code, agent-name warnings,
 * draft re-basing on a newer view, quick grants and the token of the URL fragment.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, READ_ONLY_DEFAULT, TOOL_CATALOG, TOOL_GROUPS } from '../../schemas/index.js';
import type { AgentPermissions, CatalogResponse, PermissionsView } from '../../schemas/index.js';
import { agentFlags, overrideRefusal, showsId, skeleton, visibleText } from '../../ui/src/model/agent-names.js';
import { ApiError } from '../../ui/src/api/api.js';
import { basisOf, changeText, conflictSides, sameBasis } from '../../ui/src/model/draft-rebase.js';
import { ERROR_SENTENCES, frenchError, frenchPolicyError } from '../../ui/src/model/errors-fr.js';
import { quickGrantState, quickGrantText, quickGrants } from '../../ui/src/model/quick-grants.js';
import { tokenFromFragment } from '../../ui/src/api/token.js';
import { defined } from '../support/typed.js';

const catalog: CatalogResponse = {
  tools: TOOL_CATALOG.map((tool) => ({ ...tool })),
  groups: TOOL_GROUPS.map((group) => ({ ...group })),
  readOnlyDefault: [...READ_ONLY_DEFAULT],
};
const readOnly = [...READ_ONLY_DEFAULT];

/** English words that betray an untranslated sentence. */
const ENGLISH = /\b(the|is|was|not|request|token|error|failed|invalid|unknown)\b/i;

describe('French errors', () => {
  it('has a French sentence for every error code the API can answer, and for the local failures', () => {
    const codes = [
      ...ERROR_CODES,
      'write_conflict',
      'approval_closed',
      'network_error',
      'client_error',
      'unexpected_response',
      'written_invalid',
    ];
    for (const code of codes) {
      expect(ERROR_SENTENCES[code], code).toBeDefined();
      const { message, detail } = frenchError(new ApiError(400, code, 'The English message of the service.'));
      expect(message, code).not.toMatch(ENGLISH);
      expect(detail, code).toContain('The English message of the service.'); // kept for "Détails"
    }
  });

  it('words HTTP statuses without a known code (413 from a proxy, 5xx, the network) in French', () => {
    expect(frenchError(new ApiError(413, 'http_413', 'HTTP 413 Payload Too Large')).message).toBe(
      'Requête trop volumineuse pour le service. Rien n\u2019a été modifié.',
    );
    expect(frenchError(new ApiError(502, 'http_502', 'HTTP 502 Bad Gateway')).message).toContain('HTTP 502');
    const network = frenchError(new ApiError(0, 'network_error', 'Failed to fetch'));
    expect(network.message).toBe('Service injoignable : vérifiez qu\u2019il tourne et que l\u2019adresse est la bonne.');
    expect(network.detail).toBe('network_error : Failed to fetch');
  });

  it('lists what an invalid allowlist contained', () => {
    const error = new ApiError(400, 'invalid_tools', 'Invalid allowlist', {
      unknown: ['idea_x'],
      duplicates: ['idea_ticket_read'],
      empty: 1,
    });
    expect(frenchError(error).message).toContain('tools inconnus : idea_x ; en double : idea_ticket_read ; 1 nom(s) vide(s)');
  });

  it('explains an invalid policy file in French, the raw message as detail', () => {
    const json = frenchPolicyError({
      file: '.ideai/mcp-tool-permissions.json',
      line: 1,
      column: 29,
      message: 'invalid JSON at line 1, column 29: Unexpected end of JSON input',
    });
    expect(json.message).toBe(
      'Fichier .ideai/mcp-tool-permissions.json invalide : JSON mal formé (ligne 1, colonne 29) : le fichier est incomplet ou contient une faute de syntaxe.',
    );
    expect(json.detail).toContain('Unexpected end of JSON input');
    const version = frenchPolicyError({ file: 'f.json', message: 'unsupported version 2 (expected 1)', path: '/version' });
    expect(version.message).toBe('Fichier f.json invalide : version 2 non prise en charge (attendue : 1).');
    const shape = frenchPolicyError({ file: 'f.json', message: 'Expected array at /agents', path: '/agents' });
    expect(shape.message).toBe('Fichier f.json invalide : le document ne respecte pas le format attendu (à /agents).');
  });
});

describe('agent names', () => {
  const flagsOf = (agents: { agentId: string; name: string }[], id: string): string[] =>
    (agentFlags(agents).get(id) ?? []).map((flag) => flag.text);

  it('flags two agents that show the same name, and says which ids they are', () => {
    const agents = [
      { agentId: 'QA', name: 'QA' },
      { agentId: 'Release', name: 'QA' },
      { agentId: 'Main', name: 'Main' },
    ];
    expect(flagsOf(agents, 'Release')).toEqual(['Nom en double : « QA » désigne aussi l\u2019agent QA']);
    expect(flagsOf(agents, 'QA')).toEqual(['Nom en double : « QA » désigne aussi l\u2019agent Release']);
    expect(flagsOf(agents, 'Main')).toEqual([]);
    expect(showsId({ agentId: 'Main', name: 'Main' }, false)).toBe(false);
    expect(showsId({ agentId: 'QA', name: 'Quality' }, false)).toBe(true);
    expect(showsId({ agentId: 'QA', name: 'QA' }, true)).toBe(true);
  });

  it('flags invisible and lookalike characters, and shows the invisible ones', () => {
    const agents = [
      { agentId: 'QA', name: 'QA' },
      { agentId: 'QA\u200b', name: 'QA\u200b' },
      { agentId: '\uff31\uff21', name: '\uff31\uff21' },
      { agentId: 'DevOps', name: 'D\u0435vOps' },
    ];
    expect(visibleText('QA\u200b')).toBe('QA⟨U+200B⟩');
    expect(skeleton('\uff31\uff21')).toBe('QA');
    expect(flagsOf(agents, 'QA\u200b')).toEqual([
      'Caractère invisible dans l\u2019identifiant (U+200B)',
      'Nom en double : « QA⟨U+200B⟩ » désigne aussi l\u2019agent QA, ＱＡ',
    ]);
    expect(flagsOf(agents, '\uff31\uff21')[0]).toBe('Caractères trompeurs dans l\u2019identifiant (U+FF31 U+FF21) : se lit « QA »');
    expect(flagsOf(agents, 'DevOps')).toEqual(['Caractères trompeurs dans le nom (U+0435) : se lit « DevOps »']);
    // No override is ever written for an id the service would count invalid.
    expect(overrideRefusal('QA\u200b')).toBe('Caractère invisible dans l\u2019identifiant (U+200B)');
    expect(overrideRefusal('\uff31\uff21')).toContain('Caractères trompeurs');
    expect(overrideRefusal('mcp')).toContain('réservé');
    expect(overrideRefusal('Release')).toBeNull();
    // Accented French names are not lookalikes.
    expect(flagsOf([{ agentId: 'Revue', name: 'Développeur Éléonore' }], 'Revue')).toEqual([]);
  });
});

describe('draft re-basing', () => {
  const view = (patch: Partial<PermissionsView>): PermissionsView => ({
    project: 'demo',
    revision: 'r1',
    status: 'ok',
    error: null,
    fileExists: true,
    projectDefault: { mode: 'builtin', allowedTools: readOnly, unknownTools: [] },
    agents: [agent('QA', 'inherit', readOnly), agent('DevFrontend', 'override', [...readOnly, 'idea_ticket_update_carnet'])],
    ...patch,
  });
  const agent = (agentId: string, mode: 'inherit' | 'override', allowedTools: string[]) => ({
    agentId,
    name: agentId,
    declared: true,
    mode,
    allowedTools,
    added: [],
    removed: [],
    redundant: false,
    unknownTools: [],
  });

  it('re-applies an override draft when another agent changed, not when its own override changed', () => {
    const target = { kind: 'agent', agentId: 'DevFrontend' } as const;
    const before = basisOf(view({}), target, false);
    const otherAgent = view({
      agents: [agent('QA', 'override', ['idea_list_agents']), agent('DevFrontend', 'override', [...readOnly, 'idea_ticket_update_carnet'])],
    });
    expect(sameBasis(before, basisOf(otherAgent, target, false))).toBe(true);
    const newDefault = view({ projectDefault: { mode: 'custom', allowedTools: ['idea_list_agents'], unknownTools: [] } });
    expect(sameBasis(before, basisOf(newDefault, target, false))).toBe(true); // an override replaces the default
    const own = view({ agents: [agent('QA', 'inherit', readOnly), agent('DevFrontend', 'override', readOnly)] });
    const after = basisOf(own, target, false);
    expect(sameBasis(before, after)).toBe(false);
    const sides = conflictSides(catalog, target, before, after, {
      allowed: [...readOnly, 'idea_ticket_update_carnet', 'idea_memory_write'],
      ask: [],
    });
    expect(changeText(sides.mine)).toBe('+ idea_memory_write');
    expect(changeText(sides.theirs)).toBe('\u2212 idea_ticket_update_carnet');
  });

  it('treats a change of the default as touching a new override seeded from it (a revocation is never undone silently)', () => {
    const target = { kind: 'agent', agentId: 'QA' } as const;
    const seeded = view({ projectDefault: { mode: 'custom', allowedTools: [...readOnly, 'idea_memory_write'], unknownTools: [] } });
    const before = basisOf(seeded, target, true);
    const revoked = basisOf(view({}), target, true);
    expect(sameBasis(before, revoked)).toBe(false);
    expect(conflictSides(catalog, target, before, revoked, before.effective).defaultChanged).toEqual({
      added: [],
      asked: [],
      removed: ['idea_memory_write'],
      conditions: [],
    });
  });

  it('sees a change of the tools on ask as a change of the target, and words it', () => {
    const target = { kind: 'agent', agentId: 'DevFrontend' } as const;
    const before = basisOf(view({}), target, false);
    const asked = view({
      agents: [
        agent('QA', 'inherit', readOnly),
        { ...agent('DevFrontend', 'override', [...readOnly, 'idea_ticket_update_carnet']), askTools: ['idea_memory_write'] },
      ],
    });
    const after = basisOf(asked, target, false);
    expect(sameBasis(before, after)).toBe(false);
    const sides = conflictSides(catalog, target, before, after, { allowed: readOnly, ask: ['idea_ticket_update_carnet'] });
    expect(changeText(sides.theirs)).toBe('? idea_memory_write (sur demande)');
    expect(changeText(sides.mine)).toBe('? idea_ticket_update_carnet (sur demande)');
    expect(changeText({ added: [], asked: [], removed: [], conditions: [] })).toBe('aucun changement de tools');
  });
  it('sees a change of a target’s conditions elsewhere as touching its draft, and words it', () => {
    const target = { kind: 'agent', agentId: 'DevFrontend' } as const;
    const lists = [...readOnly, 'idea_ask_agent'];
    const withConditions = (conditions: Record<string, unknown>) =>
      view({ agents: [{ ...agent('DevFrontend', 'override', lists), conditions } as AgentPermissions] });
    const before = basisOf(withConditions({ idea_ask_agent: { agentId: { in: ['QA'] } } }), target, false);
    const after = basisOf(withConditions({ idea_ask_agent: { agentId: { in: ['QA', 'Git'] } } }), target, false);
    expect(sameBasis(before, after)).toBe(false);
    const sides = conflictSides(catalog, target, before, after, before.effective);
    expect(changeText(sides.theirs)).toBe('~ idea_ask_agent (conditions)');
    expect(changeText(sides.mine)).toBe('aucun changement de tools');
  });
});

describe('quick grants and the address token', () => {
  it('offers the ticket mock-up quick grants, with partial states in words', () => {
    const grants = quickGrants(catalog);
    expect(grants.map((grant) => grant.label)).toEqual(['Déléguer à un agent', 'Modifier les tickets', 'Écrire la mémoire']);
    const tickets = defined(grants[1], 'the tickets quick grant');
    expect(quickGrantText(tickets, new Set(['idea_ticket_update_carnet']))).toBe('Partiel : 1 sur 4');
    expect(quickGrantText(tickets, new Set(tickets.tools))).toBe('Accordé');
    expect(quickGrantText(tickets, new Set())).toBe('Non accordé');
    expect(quickGrantText(tickets, new Set(), new Set(tickets.tools))).toBe('Sur demande');
    expect(quickGrantText(tickets, new Set(['idea_ticket_update']), new Set(['idea_ticket_update_status', 'idea_ticket_update']))).toBe(
      'Partiel : 1 sur 4, 1 sur demande',
    );
    expect(quickGrantState(tickets, new Set(), new Set(tickets.tools))).toBe('ask');
    expect(quickGrantState(tickets, new Set(['idea_ticket_update']), new Set())).toBe('mixed');
  });

  it('reads the token of a #token= fragment only', () => {
    expect(tokenFromFragment('#token=abc%2Bdef')).toBe('abc+def');
    expect(tokenFromFragment('#token=')).toBeNull();
    expect(tokenFromFragment('#other=1')).toBeNull();
    expect(tokenFromFragment('')).toBeNull();
  });
});
