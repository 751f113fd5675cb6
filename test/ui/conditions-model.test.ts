import { describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT, TOOL_CATALOG, TOOL_GROUPS, type CatalogResponse } from '../../schemas/index.js';
import { groupDenials, reasonsText } from '../../ui/src/model/denials-model.js';
import { defined } from '../support/typed.js';
import { previewLines, proposedDocument, savedDocument } from '../../ui/src/model/preview-model.js';
import {
  conditionOf,
  conditionText,
  conditionsToSave,
  firstProblem,
  nextArgument,
  rowProblem,
  rowsDiffer,
  rowsOf,
  sameConditions,
  toolConditionsText,
  typedValue,
  unknownArgumentWarning,
  valueText,
  type ConditionRow,
} from '../../ui/src/model/conditions-model.js';

const catalog: CatalogResponse = {
  tools: TOOL_CATALOG.map((tool) => ({ ...tool })),
  groups: TOOL_GROUPS.map((group) => ({ ...group })),
  readOnlyDefault: [...READ_ONLY_DEFAULT],
};

const row = (argument: string, operator: ConditionRow['operator'], values: ConditionRow['values'] = []): ConditionRow => ({
  argument,
  operator,
  values,
});

describe('conditions in French', () => {
  it('says the three examples of the contract word for word', () => {
    expect(conditionText('agentId', { in: ['QA', 'DevFrontend'] })).toBe('seulement pour les agents QA, DevFrontend');
    expect(conditionText('command', { prefix: ['npm test', 'npm run lint'] })).toBe('seulement les commandes npm test, npm run lint');
    expect(conditionText('issueRef', { in: ['#82', 90] })).toBe('seulement les tickets #82, #90');
  });

  it('words one value, notIn and absent sensibly', () => {
    expect(conditionText('agentId', { in: ['QA'] })).toBe('seulement pour l’agent QA');
    expect(conditionText('agentId', { notIn: ['Main', 'Git'] })).toBe('sauf pour les agents Main, Git');
    expect(conditionText('issueRef', { notIn: ['82'] })).toBe('sauf le ticket #82');
    expect(conditionText('command', { in: ['make'] })).toBe('seulement la commande exacte make');
    expect(conditionText('command', { notIn: ['rm', 'dd'] })).toBe('sauf les commandes exactes rm, dd');
    expect(conditionText('target', { absent: true })).toBe('seulement sans l’argument target');
    expect(conditionText('path', { in: ['a', 'b', 'c'] })).toBe('seulement si path vaut a, b ou c');
    expect(conditionText('path', { notIn: ['a'] })).toBe('sauf si path vaut a');
    expect(conditionText('path', { prefix: ['docs/'] })).toBe('seulement si path commence par docs/');
  });

  it('never shows a string as the number it reads like', () => {
    expect(valueText('level', 3)).toBe('3');
    expect(valueText('level', '3')).toBe('"3"');
    expect(valueText('level', '')).toBe('""');
    expect(valueText('issueRef', 82)).toBe('#82');
  });

  it('joins the conditions of a tool with « · »', () => {
    expect(toolConditionsText({ agentId: { in: ['QA'] }, target: { absent: true } })).toBe(
      'seulement pour l’agent QA · seulement sans l’argument target',
    );
    expect(toolConditionsText({})).toBeNull();
    expect(toolConditionsText(undefined)).toBeNull();
  });
});

describe('the editor rows', () => {
  it('round-trips a policy’s conditions', () => {
    const conditions = {
      idea_ask_agent: { agentId: { in: ['QA', 'DevFrontend'] } },
      idea_context_propose: { target: { absent: true as const } },
    };
    const rows = rowsOf(conditions);
    expect(rows.get('idea_ask_agent')).toEqual([row('agentId', 'in', ['QA', 'DevFrontend'])]);
    expect(conditionsToSave(rows, new Set(Object.keys(conditions)))).toEqual(conditions);
  });

  it('sends only complete rows of listed tools, sorted', () => {
    const rows = new Map([
      ['idea_run_in_background', [row('command', 'prefix', ['npm test'])]],
      ['idea_ask_agent', [row('agentId', 'in', ['QA']), row('message', 'in')]],
      ['idea_memory_write', [row('key', 'in', ['x'])]],
    ]);
    const saved = conditionsToSave(rows, new Set(['idea_ask_agent', 'idea_run_in_background']));
    expect(saved).toEqual({ idea_ask_agent: { agentId: { in: ['QA'] } }, idea_run_in_background: { command: { prefix: ['npm test'] } } });
    expect(Object.keys(saved)).toEqual(['idea_ask_agent', 'idea_run_in_background']);
  });

  it('says what an incomplete row lacks', () => {
    expect(rowProblem(row('', 'in'), [])).toBe('Choisissez un argument.');
    expect(rowProblem(row('1x', 'in', ['a']), [])).toMatch(/^Nom d’argument invalide/);
    expect(rowProblem(row('agentId', 'in'), [])).toMatch(/au moins une valeur/);
    expect(rowProblem(row('target', 'absent'), [])).toBeNull();
    const twice = [row('agentId', 'in', ['QA']), row('agentId', 'notIn', ['Git'])];
    expect(rowProblem(twice[0] as ConditionRow, twice)).toBe('L’argument agentId a déjà une condition.');
    expect(conditionOf(row('agentId', 'in'))).toBeNull();
    const rows = new Map([['idea_ask_agent', [row('agentId', 'in')]]]);
    expect(firstProblem(rows, new Set(['idea_ask_agent']))).toBe(
      'Condition incomplète sur idea_ask_agent (agentId) : Ajoutez au moins une valeur (tapez-la puis Entrée).',
    );
    // A tool no longer listed sends no condition, so its rows block nothing.
    expect(firstProblem(rows, new Set())).toBeNull();
  });

  it('compares conditions whatever their order, and counts an incomplete row as a change', () => {
    const a = { t1: { x: { in: ['1'] }, y: { absent: true as const } }, t2: { z: { prefix: ['p'] } } };
    const b = { t2: { z: { prefix: ['p'] } }, t1: { y: { absent: true as const }, x: { in: ['1'] } } };
    expect(sameConditions(a, b)).toBe(true);
    expect(sameConditions(a, { t1: { x: { in: ['1'] } } })).toBe(false);
    const listed = new Set(['t1', 't2']);
    expect(rowsDiffer(rowsOf(b), a, listed)).toBe(false);
    const withEmpty = rowsOf(b);
    withEmpty.get('t1')?.push(row('w', 'in'));
    expect(rowsDiffer(withEmpty, a, listed)).toBe(true);
  });
});

describe('typing a value', () => {
  it('trims, writes tickets #82 and refuses duplicates', () => {
    expect(typedValue(row('agentId', 'in'), '  QA ')).toEqual({ value: 'QA' });
    expect(typedValue(row('issueRef', 'in'), '82')).toEqual({ value: '#82' });
    expect(typedValue(row('issueRef', 'in', ['#82']), '#82')).toEqual({ problem: '#82 est déjà dans la liste.' });
    expect(typedValue(row('issueRef', 'in', [82]), '82')).toEqual({ problem: '#82 est déjà dans la liste.' });
    expect(typedValue(row('issueRef', 'in'), 'abc')).toEqual({ problem: 'Un ticket s’écrit #82 ou 82.' });
    expect(typedValue(row('agentId', 'in'), '   ')).toEqual({ problem: 'Tapez une valeur avant Entrée.' });
  });

  it('refuses a prefix that could never match (a shell control sequence)', () => {
    for (const text of ['npm test; rm -rf /', 'a && b', 'a | b', 'echo `x`', 'echo $(x)', 'a > b', 'a < b']) {
      expect(typedValue(row('command', 'prefix'), text)).toHaveProperty('problem');
    }
    expect(typedValue(row('command', 'prefix'), 'npm run lint')).toEqual({ value: 'npm run lint' });
    // An exact value may hold them (it is compared, never run).
    expect(typedValue(row('command', 'in'), 'a; b')).toEqual({ value: 'a; b' });
  });

  it('offers the catalog’s arguments in order and warns on others', () => {
    expect(nextArgument(['agentId', 'message'], [])).toBe('agentId');
    expect(nextArgument(['agentId', 'message'], [row('agentId', 'in')])).toBe('message');
    expect(nextArgument(['agentId'], [row('agentId', 'in')])).toBe('');
    expect(unknownArgumentWarning('agentId', ['agentId'])).toBeNull();
    expect(unknownArgumentWarning('agent', ['agentId'])).toMatch(/^Argument inconnu du catalogue/);
  });
});

describe('the preview of a condition', () => {
  it('says the calls kept without the arguments a first condition reads, never guessing them', () => {
    const replay = (notReplayable: number) => ({
      replay: { decisions: 10, from: null, to: null, counts: { allowToDeny: 0, denyToAllow: 0, toAsk: 0, notReplayable }, changed: [] },
    });
    expect(previewLines(replay(3))).toEqual([
      {
        kind: 'unknown',
        text: '3 appels récents ne peuvent pas être rejoués : ils ont été gardés sans les arguments que la condition lit.',
      },
    ]);
    expect(previewLines(replay(0))).toEqual([{ kind: 'unchanged', text: 'Aucun appel récent ne change.' }]);
  });

  it('puts the conditions of the draft in the proposed document, and only those of listed tools', () => {
    const view = {
      project: 'demo',
      revision: 'r1',
      status: 'ok' as const,
      error: null,
      fileExists: true,
      projectDefault: { mode: 'builtin' as const, allowedTools: [...READ_ONLY_DEFAULT], unknownTools: [], conditions: {} },
      agents: [],
    };
    const rows = new Map([
      ['idea_ask_agent', [row('agentId', 'in', ['QA'])]],
      ['idea_memory_write', [row('key', 'in', ['x'])]],
    ]);
    const document = proposedDocument(catalog, view, {
      target: { kind: 'agent', agentId: 'DevFrontend' },
      allowed: new Set([...READ_ONLY_DEFAULT, 'idea_ask_agent']),
      ask: new Set(),
      conditions: rows,
    });
    expect(document.agents?.[0]?.policy.conditions).toEqual({ idea_ask_agent: { agentId: { in: ['QA'] } } });
    expect(savedDocument(view)).toEqual({ version: 1, agents: [] });
  });
});

describe('Refus récents of a condition', () => {
  it('names the argument that refused', () => {
    const entry = (argument: string | undefined, at: string) => ({
      decisionId: at,
      at,
      requester: 'QA',
      tool: 'idea_ask_agent',
      allow: false,
      reason: 'argument_not_allowed' as const,
      source: 'agent-override' as const,
      ...(argument === undefined ? {} : { argument }),
    });
    const [group] = groupDenials([entry('agentId', '2026-01-02'), entry('message', '2026-01-01'), entry('agentId', '2026-01-01')]);
    expect(group?.arguments).toEqual(['agentId', 'message']);
    expect(reasonsText(defined(group, 'the idea_ask_agent group'))).toBe(
      'hors des conditions de ses arguments (arguments agentId, message)',
    );
    expect(reasonsText({ reasons: ['argument_not_allowed'], arguments: ['agentId'] })).toBe(
      'hors des conditions de ses arguments (argument agentId)',
    );
    expect(reasonsText({ reasons: ['not_in_allowlist'], arguments: [] })).toBe('pas dans la liste autorisée');
    expect(group?.fixable).toBe(false);
  });
});
