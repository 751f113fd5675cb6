/**
 * The panel's usage limits, pure part (docs/api.md#usage-limits): the editable rows and their
 * French problems, what a save sends, the raised limit, the French of the service's refusals, and
 * limits in the conflict basis and the preview's documents.
 */
import { describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT, TOOL_CATALOG, TOOL_GROUPS } from '../../schemas/index.js';
import type { CatalogResponse, PermissionsView } from '../../schemas/index.js';
import { ApiError } from '../../ui/src/api/api.js';
import { basisOf, changeBetween, changeText, sameBasis } from '../../ui/src/model/draft-rebase.js';
import { frenchError } from '../../ui/src/model/errors-fr.js';
import {
  firstLimitProblem,
  limitOfRow,
  limitRowProblem,
  limitRowsOf,
  limitsDiffer,
  limitsToSave,
  raisedLimit,
  rowOfLimit,
  withLimits,
  type LimitRow,
} from '../../ui/src/model/limits-model.js';
import { proposedDocument, savedDocument } from '../../ui/src/model/preview-model.js';

const catalog: CatalogResponse = {
  tools: TOOL_CATALOG.map((tool) => ({ ...tool })),
  groups: TOOL_GROUPS.map((group) => ({ ...group })),
  readOnlyDefault: [...READ_ONLY_DEFAULT],
};

const row = (max: string, count: string, unit: LimitRow['unit'] = 'h'): LimitRow => ({ max, count, unit });

const view = (limits?: Record<string, { max: number; per: string }>): PermissionsView => ({
  project: 'demo',
  revision: 'r1',
  status: 'ok',
  error: null,
  fileExists: true,
  projectDefault: { mode: 'builtin', allowedTools: [...READ_ONLY_DEFAULT], unknownTools: [] },
  agents: [
    {
      agentId: 'QA',
      name: 'QA',
      declared: true,
      mode: 'override',
      allowedTools: [...READ_ONLY_DEFAULT, 'idea_ask_agent'],
      added: ['idea_ask_agent'],
      removed: [],
      redundant: false,
      unknownTools: [],
      ...(limits === undefined ? {} : { limits }),
    },
  ],
});

describe('a limit as the editor holds it', () => {
  it('reads a saved limit into fields and back', () => {
    expect(rowOfLimit({ max: 20, per: '10m' })).toEqual(row('20', '10', 'm'));
    expect(limitOfRow(row('20', '10', 'm'))).toEqual({ max: 20, per: '10m' });
    // What French writes (« 1 000 ») and leading zeros are read as the number.
    expect(limitOfRow(row('1\u202f000', '05', 'd'))).toEqual({ max: 1000, per: '5d' });
  });

  it('says in French what is wrong, max first', () => {
    expect(limitRowProblem(row('', '1'))).toEqual({ field: 'max', text: 'Indiquez le nombre d’appels (un entier de 1 à 100\u202f000).' });
    for (const max of ['0', '-1', '2.5', 'abc', '100001'])
      expect(limitRowProblem(row(max, '1'))).toEqual({ field: 'max', text: 'Nombre d’appels : un entier de 1 à 100\u202f000.' });
    expect(limitRowProblem(row('100000', '1'))).toBeNull();
    expect(limitRowProblem(row('5', '0'))?.text).toBe('Durée de la fenêtre : un entier à partir de 1.');
    expect(limitRowProblem(row('5', ' '))?.text).toBe('Indiquez la durée de la fenêtre (un entier à partir de 1).');
    expect(limitRowProblem(row('5', '8', 'd'))?.text).toBe('Fenêtre trop longue : 7 jours au plus.');
    expect(limitRowProblem(row('5', '169', 'h'))?.text).toBe('Fenêtre trop longue : 7 jours au plus.');
    expect(limitRowProblem(row('5', '168', 'h'))).toBeNull();
    expect(limitRowProblem(row('5', '1', 's'))).toBeNull();
  });

  it('sends the valid limits of listed tools only, and sees an invalid row as a change', () => {
    const rows = new Map([
      ['idea_ask_agent', row('20', '1')],
      ['idea_memory_write', row('5', '10', 'm')],
      ['idea_stop_agent', row('0', '1')],
    ]);
    const listed = new Set(['idea_ask_agent', 'idea_stop_agent']);
    expect(limitsToSave(rows, listed)).toEqual({ idea_ask_agent: { max: 20, per: '1h' } });
    expect(firstLimitProblem(rows, listed)).toBe('Limite invalide sur idea_stop_agent : Nombre d’appels : un entier de 1 à 100\u202f000.');
    expect(firstLimitProblem(rows, new Set(['idea_ask_agent']))).toBeNull();
    expect(limitsDiffer(rows, { idea_ask_agent: { max: 20, per: '1h' } }, new Set(['idea_ask_agent']))).toBe(false);
    expect(limitsDiffer(rows, { idea_ask_agent: { max: 20, per: '1h' } }, listed)).toBe(true);
    expect(limitsDiffer(limitRowsOf({}), { idea_ask_agent: { max: 20, per: '1h' } }, new Set(['idea_ask_agent']))).toBe(true);
    expect(
      withLimits(
        { allowedTools: ['idea_ticket_read'], askTools: ['idea_ask_agent'] },
        { idea_ask_agent: { max: 2, per: '1d' }, idea_gone: { max: 1, per: '1s' } },
      ),
    ).toEqual({ allowedTools: ['idea_ticket_read'], askTools: ['idea_ask_agent'], limits: { idea_ask_agent: { max: 2, per: '1d' } } });
  });

  it('raises a limit to twice its calls in the same window, never past 100,000', () => {
    expect(raisedLimit({ max: 1, per: '1h' })).toEqual({ max: 2, per: '1h' });
    expect(raisedLimit({ max: 20, per: '10m' })).toEqual({ max: 40, per: '10m' });
    expect(raisedLimit({ max: 60_000, per: '1d' })).toEqual({ max: 100_000, per: '1d' });
    expect(raisedLimit({ max: 100_000, per: '1d' })).toBeNull();
  });
});

describe('the service’s refusals of limits, in French', () => {
  it('names the tool and the field of an invalid_limits problem', () => {
    const problems = [
      { tool: 'idea_ask_agent', message: 'invalid limit: max expects an integer from 1 to 100000, got the number 0' },
      { tool: 'idea_stop_agent', message: 'limit on "idea_stop_agent": the tool is in neither allowedTools nor askTools of this policy' },
      {
        tool: 'idea_memory_write',
        message: 'invalid limit: per expects <n>s, <n>m, <n>h or <n>d from 1s to 7d (e.g. "1h"), got the string "8d"',
      },
    ];
    const french = frenchError(new ApiError(400, 'invalid_limits', 'Invalid limits (…); nothing was written.', { problems }));
    expect(french.message).toBe(
      'Le service a refusé ces limites d’usage (un tool qui n’est plus autorisé ni sur demande, ou une limite mal formée). Rien n’a été modifié. ' +
        '(idea_ask_agent : nombre d’appels attendu : un entier de 1 à 100\u202f000 ; idea_stop_agent : ce tool n’est ni autorisé ni sur demande ; ' +
        'idea_memory_write : fenêtre attendue : de 1 seconde à 7 jours (par exemple 1h))',
    );
    expect(french.detail).toContain('invalid_limits');
  });

  it('points a schema refusal inside limits at the tool and the field', () => {
    const details = { in: 'body', errors: [{ path: '/limits/idea_ask_agent/per', message: 'must match pattern' }] };
    expect(frenchError(new ApiError(400, 'invalid_request', 'Invalid body', details)).message).toBe(
      'Le service a refusé la requête : son contenu n’a pas le format attendu. Rien n’a été modifié. (limite de idea_ask_agent : fenêtre attendue : un entier suivi de s, m, h ou d)',
    );
    // Other schema refusals read as before.
    expect(frenchError(new ApiError(400, 'invalid_request', 'Invalid body', { errors: [{ path: '/allowedTools' }] })).message).toBe(
      'Le service a refusé la requête : son contenu n’a pas le format attendu. Rien n’a été modifié.',
    );
  });
});

describe('limits in concurrent changes and previews', () => {
  const target = { kind: 'agent', agentId: 'QA' } as const;

  it('sees a limit changed elsewhere as touching the target’s draft, and words it', () => {
    const before = basisOf(view({ idea_ask_agent: { max: 20, per: '1h' } }), target, false);
    const after = basisOf(view({ idea_ask_agent: { max: 5, per: '1h' } }), target, false);
    expect(sameBasis(before, after)).toBe(false);
    expect(sameBasis(before, basisOf(view({ idea_ask_agent: { max: 20, per: '1h' } }), target, false))).toBe(true);
    expect(changeText(changeBetween(catalog, before.effective, after.effective))).toBe('~ idea_ask_agent (limite)');
    expect(changeText(changeBetween(catalog, before.effective, basisOf(view(), target, false).effective))).toBe(
      '~ idea_ask_agent (limite)',
    );
  });

  it('keeps the saved limits in the preview’s documents and puts the draft’s in', () => {
    const saved = view({ idea_ask_agent: { max: 20, per: '1h' } });
    expect(savedDocument(saved).agents?.[0]?.policy.limits).toEqual({ idea_ask_agent: { max: 20, per: '1h' } });
    const draft = {
      target,
      allowed: new Set([...READ_ONLY_DEFAULT, 'idea_ask_agent']),
      ask: new Set<string>(),
      limits: limitRowsOf({ idea_ask_agent: { max: 20, per: '1h' } }),
    };
    // An unchanged draft gives the saved document exactly (no preview is asked for).
    expect(JSON.stringify(proposedDocument(catalog, saved, draft))).toBe(JSON.stringify(savedDocument(saved)));
    const lowered = { ...draft, limits: new Map([['idea_ask_agent', row('2', '1')]]) };
    expect(proposedDocument(catalog, saved, lowered).agents?.[0]?.policy.limits).toEqual({ idea_ask_agent: { max: 2, per: '1h' } });
    expect(proposedDocument(catalog, saved, { ...draft, limits: new Map() }).agents?.[0]?.policy.limits).toBeUndefined();
  });
});
