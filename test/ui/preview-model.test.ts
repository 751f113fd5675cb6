import { describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT, TOOL_CATALOG, TOOL_GROUPS } from '../../schemas/index.js';
import type { CatalogResponse, PermissionsView, ReplayChange } from '../../schemas/index.js';
import { previewLines, proposedDocument, savedDocument } from '../../ui/src/model/preview-model.js';

const catalog: CatalogResponse = {
  tools: TOOL_CATALOG.map((tool) => ({ ...tool })),
  groups: TOOL_GROUPS.map((group) => ({ ...group })),
  readOnlyDefault: [...READ_ONLY_DEFAULT],
};

const agent = (agentId: string, mode: 'inherit' | 'override', allowedTools: string[], askTools?: string[]) => ({
  agentId,
  name: agentId,
  declared: true,
  mode,
  allowedTools,
  ...(askTools === undefined ? {} : { askTools }),
  added: [],
  removed: [],
  redundant: false,
  unknownTools: mode === 'override' ? ['idea_gone'] : [],
});

const view: PermissionsView = {
  project: 'demo',
  revision: 'r1',
  status: 'ok',
  error: null,
  fileExists: true,
  projectDefault: { mode: 'custom', allowedTools: ['idea_ticket_read'], unknownTools: [] },
  agents: [
    agent('Git', 'inherit', ['idea_ticket_read']),
    agent('QA', 'override', ['idea_ticket_read', 'idea_memory_write'], ['idea_ticket_create']),
  ],
};

const change = (
  requester: string,
  tool: string,
  before: ReplayChange['before'],
  after: ReplayChange['after'],
  calls: number,
): ReplayChange => ({
  requester,
  tool,
  before,
  after,
  calls,
  lastAt: '2026-12-01T12:00:00.000Z',
});
const replay = (changed: ReplayChange[]) => ({
  replay: { decisions: 100, from: null, to: null, counts: { allowToDeny: 0, denyToAllow: 0, toAsk: 0 }, changed },
});

describe('the document a save of the draft would leave', () => {
  it('keeps the saved default and overrides, leaves inheriting agents and unknown names out', () => {
    expect(savedDocument(view)).toEqual({
      version: 1,
      projectDefault: { allowedTools: ['idea_ticket_read'] },
      agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_ticket_read', 'idea_memory_write'], askTools: ['idea_ticket_create'] } }],
    });
  });

  it('replaces only the draft’s target, with the lists a save sends, agents by id', () => {
    const draft = {
      target: { kind: 'agent' as const, agentId: 'Git' },
      allowed: new Set(['idea_memory_write', 'idea_ticket_read']),
      ask: new Set<string>(),
    };
    expect(proposedDocument(catalog, view, draft).agents).toEqual([
      { agentId: 'Git', policy: { allowedTools: ['idea_ticket_read', 'idea_memory_write'] } },
      { agentId: 'QA', policy: { allowedTools: ['idea_ticket_read', 'idea_memory_write'], askTools: ['idea_ticket_create'] } },
    ]);
    const unchanged = {
      target: { kind: 'agent' as const, agentId: 'QA' },
      allowed: new Set(['idea_ticket_read', 'idea_memory_write']),
      ask: new Set(['idea_ticket_create']),
    };
    expect(JSON.stringify(proposedDocument(catalog, view, unchanged))).toBe(JSON.stringify(savedDocument(view)));
    const toDefault = { target: { kind: 'default' as const }, allowed: new Set<string>(), ask: new Set<string>() };
    expect(proposedDocument(catalog, view, toDefault).projectDefault).toEqual({ allowedTools: [] });
  });
});

describe('the sentences of a preview', () => {
  it('says refused calls first, with the biggest groups and how many more', () => {
    const lines = previewLines(
      replay([
        change('QA', 'idea_memory_write', 'allow', 'deny', 12),
        change('Git', 'idea_memory_write', 'allow', 'deny', 3),
        change('Main', 'idea_memory_write', 'allow', 'deny', 2),
        change('Architect', 'idea_memory_write', 'allow', 'deny', 1),
        change('Main', 'idea_ticket_create', 'deny', 'allow', 1),
        change('QA', 'idea_ticket_update', 'allow', 'ask', 4),
        change('QA', 'idea_ticket_link', 'ask', 'deny', 2),
      ]),
    );
    expect(lines.map((line) => line.text)).toEqual([
      'Ce changement aurait refusé 18 appels récents : QA · idea_memory_write ×12, Git · idea_memory_write ×3, Main · idea_memory_write ×2 et 1 autre.',
      'Ce changement aurait autorisé 1 appel récent : Main · idea_ticket_create ×1.',
      'Ce changement aurait demandé votre accord pour 4 appels récents : QA · idea_ticket_update ×4.',
      '2 appels récents qui demandaient votre accord auraient été refusés : QA · idea_ticket_link ×2.',
    ]);
  });

  it('says when nothing changes, and shows an invisible character in a requester', () => {
    expect(previewLines(replay([]))).toEqual([{ kind: 'unchanged', text: 'Aucun appel récent ne change.' }]);
    expect(previewLines(replay([change('QA\u200b', 'idea_memory_write', 'allow', 'deny', 1)]))[0]?.text).toBe(
      'Ce changement aurait refusé 1 appel récent : QA⟨U+200B⟩ · idea_memory_write ×1.',
    );
  });
});
