import { describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT, TOOL_CATALOG, TOOL_GROUPS } from '../../schemas/index.js';
import type { CatalogResponse } from '../../schemas/index.js';
import {
  allowlistToSave,
  checkboxLabel,
  counterText,
  differenceText,
  groupAccessibleName,
  groupOpenByDefault,
  groupTools,
  rowState,
  listsToSave,
  summaryText,
  toolState,
} from '../../ui/src/model/model.js';

const catalog: CatalogResponse = {
  tools: TOOL_CATALOG.map((tool) => ({ ...tool })),
  groups: TOOL_GROUPS.map((group) => ({ ...group })),
  readOnlyDefault: [...READ_ONLY_DEFAULT],
};
const readOnly = new Set<string>(READ_ONLY_DEFAULT);

describe('UI wording', () => {
  it('summarises read and write grants with French agreement', () => {
    expect(summaryText(catalog, readOnly)).toBe('9 lecture autorisés · 0 écriture autorisé');
    expect(summaryText(catalog, new Set([...readOnly, 'idea_ticket_update_carnet']))).toBe('9 lecture autorisés · 1 écriture autorisé');
    // A tool a live grant allows counts too, and is said temporary.
    expect(summaryText(catalog, readOnly, new Set(), new Set(['idea_memory_write', 'idea_ask_agent']))).toBe(
      '9 lecture autorisés · 2 écriture autorisés (dont 2 temporaires)',
    );
    expect(summaryText(catalog, new Set([...readOnly, 'idea_ticket_update_carnet', 'idea_memory_write']))).toBe(
      '9 lecture autorisés · 2 écriture autorisés',
    );
  });

  it('names counters, group buttons and checkboxes as the ticket does', () => {
    expect(counterText(3, 7)).toBe('3/7 autorisés');
    expect(counterText(1, 7)).toBe('1/7 autorisé');
    expect(groupAccessibleName('Tickets', 1, 7)).toBe('Tickets, 1 sur 7 autorisé');
    expect(checkboxLabel({ name: 'idea_ticket_update_carnet', label: "Modifier le carnet d'un ticket" })).toBe(
      "Modifier le carnet d'un ticket, idea_ticket_update_carnet",
    );
  });

  it('describes how an override differs from the default', () => {
    const override = new Set([...readOnly, 'idea_ask_agent', 'idea_memory_write']);
    override.delete('idea_sprint_list');
    expect(differenceText(catalog, override, readOnly)).toBe('Diffère du défaut : +2 écriture, -1 lecture');
    expect(differenceText(catalog, readOnly, readOnly)).toBeNull();
    expect(differenceText(catalog, readOnly, readOnly, new Set(['idea_memory_write']))).toBe('Diffère du défaut : +1 sur demande');
    expect(differenceText(catalog, readOnly, readOnly, new Set(), new Set(['idea_memory_write']))).toBe(
      'Diffère du défaut : -1 sur demande',
    );
  });

  it('counts the tools on ask apart from the allowed ones', () => {
    const ask = new Set(['idea_memory_write', 'idea_ask_agent']);
    expect(summaryText(catalog, readOnly, ask)).toBe('9 lecture autorisés · 0 écriture autorisé · 2 sur demande');
    expect(counterText(1, 7, 2)).toBe('1/7 autorisé · 2 sur demande');
    expect(groupAccessibleName('Tickets', 1, 7, 2)).toBe('Tickets, 1 sur 7 autorisé, 2 sur demande');
  });
});

describe('row states', () => {
  it('shows the plain state on the project default', () => {
    expect(rowState({ kind: 'default' }, true, true, true)).toBe('Autorisé');
    expect(rowState({ kind: 'default' }, false, false, false)).toBe('Refusé');
  });

  it('shows inherited grants as Hérité for an agent without override', () => {
    const agent = { kind: 'agent', agentId: 'QA' } as const;
    expect(rowState(agent, false, true, true)).toBe('Hérité');
    expect(rowState(agent, false, false, false)).toBe('Refusé');
  });

  it('says Sur demande for a tool on ask, and Sur demande (hérité) for an agent that inherits it', () => {
    const agent = { kind: 'agent', agentId: 'QA' } as const;
    expect(rowState({ kind: 'default' }, true, false, false, true)).toBe('Sur demande');
    expect(rowState(agent, false, false, false, true)).toBe('Sur demande (hérité)');
    expect(rowState(agent, true, false, true, true)).toBe('Sur demande');
    expect(toolState('a', new Set(['a']), new Set())).toBe('allow');
    expect(toolState('a', new Set(), new Set(['a']))).toBe('ask');
    expect(toolState('a', new Set(), new Set())).toBe('deny');
  });

  it('says Autorisé (temporaire) for a tool a live grant allows, whatever the policy says of it', () => {
    const agent = { kind: 'agent', agentId: 'QA' } as const;
    expect(rowState(agent, true, false, false, false, true)).toBe('Autorisé (temporaire)');
    expect(rowState(agent, false, false, false, true, true)).toBe('Autorisé (temporaire)');
    expect(rowState(agent, true, true, false, false, true)).toBe('Ajouté'); // allowed by the policy anyway
  });

  it('compares an override with the default: Ajouté, Retiré, Autorisé, Refusé', () => {
    const agent = { kind: 'agent', agentId: 'QA' } as const;
    expect(rowState(agent, true, true, false)).toBe('Ajouté');
    expect(rowState(agent, true, false, true)).toBe('Retiré');
    expect(rowState(agent, true, true, true)).toBe('Autorisé');
    expect(rowState(agent, true, false, false)).toBe('Refusé');
  });
});

describe('groups and saves', () => {
  it('groups tools by the catalog groups and classifies them from the catalog', () => {
    const groups = groupTools(catalog);
    expect(groups.map((group) => group.id)).toEqual(TOOL_GROUPS.map((group) => group.id));
    expect(groups.find((group) => group.id === 'tickets')?.tools).toHaveLength(7);
    expect(groups.filter((group) => group.access === 'read').map((group) => group.id)).toEqual(['project-read', 'ticket-read']);
    // The classification is the backend's: flip one tool and the group follows.
    const flipped = {
      ...catalog,
      tools: catalog.tools.map((tool) => (tool.name === 'idea_sprint_list' ? { ...tool, access: 'write' as const } : tool)),
    };
    expect(groupTools(flipped).find((group) => group.id === 'ticket-read')?.access).toBe('write');
  });

  it('opens read groups for the default only, write groups always', () => {
    expect(groupOpenByDefault({ kind: 'default' }, 'read')).toBe(true);
    expect(groupOpenByDefault({ kind: 'agent', agentId: 'QA' }, 'read')).toBe(false);
    expect(groupOpenByDefault({ kind: 'agent', agentId: 'QA' }, 'write')).toBe(true);
  });

  it('never saves unknown names, and saves in catalog order', () => {
    const allowed = new Set(['idea_memory_write', 'idea_bogus_tool', 'idea_list_agents']);
    expect(allowlistToSave(catalog, allowed)).toEqual(['idea_list_agents', 'idea_memory_write']);
  });

  it('sends askTools only when a tool is on ask, never a name in both lists', () => {
    expect(listsToSave(catalog, new Set(['idea_list_agents']), new Set())).toEqual({ allowedTools: ['idea_list_agents'] });
    expect(
      listsToSave(
        catalog,
        new Set(['idea_list_agents']),
        new Set(['idea_memory_write', 'idea_list_agents', 'idea_bogus_tool', 'idea_ask_agent']),
      ),
    ).toEqual({ allowedTools: ['idea_list_agents'], askTools: ['idea_ask_agent', 'idea_memory_write'] });
  });
});
