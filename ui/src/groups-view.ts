/**
 * "Détail des tools": the catalog's groups with counters, each headed by a toolbar (the group
 * button, "Tout autoriser", "Tout retirer") that costs one Tab stop; arrows move inside it.
 */
import { h, type Child } from './dom.js';
import { TOOLBAR_ITEMS } from './editing.js';
import { checkboxLabel, counterText, groupAccessibleName, rowState, type CatalogTool, type ToolGroupView } from './model.js';
import type { Panel } from './panel.js';

const STATE_CLASS: Record<string, string> = {
  Autorisé: 'state-allowed',
  Refusé: 'state-denied',
  Hérité: 'state-inherited',
  Ajouté: 'state-added',
  Retiré: 'state-removed',
};

export function renderAccessSection(panel: Panel, access: 'read' | 'write', title: string, groups: ToolGroupView[]): Child {
  const own = groups.filter((group) => group.access === access);
  if (own.length === 0) return null;
  const total = own.reduce((sum, group) => sum + group.tools.length, 0);
  const heading = access === 'read' ? `${title}, autorisés par défaut (${total})` : `${title} (${total})`;
  return h(
    'section',
    { class: `access-section access-${access}`, 'aria-label': heading },
    h('h4', null, heading),
    own.map((group) => renderGroup(panel, group)),
  );
}

function renderToolbar(panel: Panel, group: ToolGroupView, open: boolean, count: number, bodyId: string): Child {
  const editable = panel.editable();
  const stop = panel.edit.toolbarStop(group.id);
  const tabindex = (index: number): number => (index === stop ? 0 : -1);
  const remember = (index: number) => () => panel.state.toolbarFocus.set(group.id, index);
  const toggle = h(
    'button',
    {
      id: `group-toggle-${group.id}`,
      class: 'group-toggle',
      type: 'button',
      tabindex: tabindex(0),
      'aria-expanded': String(open),
      'aria-controls': bodyId,
      'aria-label': groupAccessibleName(group.label, count, group.tools.length),
      onfocus: remember(0),
      onclick: () => panel.toggleGroup(group.id, group.access),
    },
    h('span', { class: 'chevron', 'aria-hidden': 'true' }, open ? '▾' : '▸'),
    h('span', { class: 'group-label' }, group.label),
    h('span', { class: 'counter' }, counterText(count, group.tools.length)),
  );
  if (!editable) return h('div', { class: 'group-head' }, toggle);
  const action = (index: 1 | 2, allowed: boolean, text: string): Child =>
    h(
      'button',
      {
        id: `${TOOLBAR_ITEMS[index]}-${group.id}`,
        class: 'button button-quiet',
        type: 'button',
        tabindex: tabindex(index),
        'aria-label': `${text} (${group.label})`,
        onfocus: remember(index),
        onclick: () => panel.edit.setGroup(group.id, allowed),
      },
      text,
    );
  const onKeydown = (event: Event): void => {
    if (event instanceof KeyboardEvent && panel.edit.moveToolbarFocus(group.id, event.key)) event.preventDefault();
  };
  return h(
    'div',
    {
      class: 'group-head',
      role: 'toolbar',
      'aria-label': `Groupe ${group.label}`,
      'aria-describedby': 'toolbar-hint',
      onkeydown: onKeydown,
    },
    toggle,
    h('div', { class: 'group-actions' }, action(1, true, 'Tout autoriser dans ce groupe'), action(2, false, 'Tout retirer dans ce groupe')),
  );
}

function renderGroup(panel: Panel, group: ToolGroupView): Child {
  const allowed = panel.shownAllowed();
  const count = group.tools.filter((tool) => allowed.has(tool.name)).length;
  const open = panel.groupOpen(group.id, group.access);
  const bodyId = `group-body-${group.id}`;
  const confirmation = panel.state.confirmation;
  const groupConfirmation = confirmation !== null && confirmation.groupId === group.id && confirmation.tools.length > 1;
  return h(
    'div',
    { class: 'group' },
    renderToolbar(panel, group, open, count, bodyId),
    h(
      'div',
      { id: bodyId, class: 'group-body', hidden: !open },
      groupConfirmation ? renderConfirmation(panel, confirmation.tools) : null,
      h(
        'ul',
        { class: 'tool-list' },
        group.tools.map((tool) => renderTool(panel, tool)),
      ),
    ),
  );
}

function renderTool(panel: Panel, tool: CatalogTool): Child {
  const allowed = panel.shownAllowed().has(tool.name);
  const editable = panel.editable();
  const state = rowState(panel.state.target, panel.overriding(), allowed, panel.defaultAllowed().has(tool.name));
  const inheritedLook = panel.state.target.kind === 'agent' && !panel.overriding();
  const confirmation = panel.state.confirmation;
  const awaiting = confirmation !== null && confirmation.tools.length === 1 && confirmation.tools[0] === tool.name;
  const id = `tool-${tool.name}`;
  const control = editable
    ? h('input', {
        id,
        type: 'checkbox',
        class: 'tool-check',
        checked: allowed,
        'aria-label': checkboxLabel(tool),
        'aria-describedby': `state-${tool.name}`,
        onchange: (event: Event) => panel.edit.toggleTool(tool.name, (event.target as HTMLInputElement).checked),
      })
    : h('span', { class: `mark${allowed ? ' mark-on' : ''}`, 'aria-hidden': 'true' }, allowed ? '✓' : '–');
  return h(
    'li',
    { class: `tool-row access-${tool.access}${inheritedLook ? ' inherited' : ''}` },
    h(
      'div',
      { class: 'tool-line' },
      control,
      h(
        editable ? 'label' : 'span',
        editable ? { for: id, class: 'tool-text' } : { class: 'tool-text' },
        h('code', { class: 'tool-name' }, tool.name),
        h('span', { class: 'tool-label' }, tool.label),
      ),
      tool.access === 'read' ? h('span', { class: 'badge badge-read' }, 'Lecture') : h('span', { class: 'badge badge-write' }, 'Écriture'),
      h('span', { id: `state-${tool.name}`, class: `state ${STATE_CLASS[state] ?? ''}` }, state),
    ),
    awaiting ? renderConfirmation(panel, [tool.name]) : null,
  );
}

function renderConfirmation(panel: Panel, tools: string[]): Child {
  const message =
    tools.length === 1
      ? 'Ce tool sera autorisé pour tous les agents sans override. Confirmer cette modification ?'
      : `Ces tools (${tools.join(', ')}) seront autorisés pour tous les agents sans override. Confirmer cette modification ?`;
  return h(
    'div',
    { class: 'inline-confirm', role: 'alert' },
    h('p', null, message),
    h(
      'div',
      { class: 'button-row' },
      h(
        'button',
        { id: 'confirm-write', class: 'button button-primary', type: 'button', onclick: () => panel.edit.confirmWriteTools() },
        'Confirmer',
      ),
      h('button', { id: 'confirm-write-cancel', class: 'button', type: 'button', onclick: () => panel.edit.cancelWriteTools() }, 'Annuler'),
    ),
  );
}

/** The hint every group toolbar points to (rendered once per editor). */
export function renderToolbarHint(): Child {
  return h(
    'p',
    { id: 'toolbar-hint', class: 'visually-hidden' },
    'Flèches gauche et droite : Tout autoriser, Tout retirer dans ce groupe.',
  );
}
