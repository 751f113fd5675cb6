/**
 * "Détail des tools": the catalog's groups with counters, each headed by a toolbar (the group
 * button, "Tout autoriser", "Tout demander", "Tout retirer") that costs one Tab stop; arrows move
 * inside it. Each tool row offers Autorisé, Demander, Refusé when the target is editable.
 */
import { renderChoice } from './choice-view.js';
import { h, type Child } from './dom.js';
import { TOOLBAR_ITEMS } from './editing.js';
import {
  checkboxLabel,
  counterText,
  groupAccessibleName,
  rowState,
  toolState,
  type CatalogTool,
  type ToolGroupView,
  type ToolState,
} from './model.js';
import type { Panel } from './panel.js';
import { renderGrantBadge } from './requests-view.js';

const STATE_CLASS: Record<string, string> = {
  Autorisé: 'state-allowed',
  Refusé: 'state-denied',
  Hérité: 'state-inherited',
  Ajouté: 'state-added',
  Retiré: 'state-removed',
  Demander: 'state-ask',
  'Demander (hérité)': 'state-ask',
};

const MARKS: Record<ToolState, string> = { allow: '✓', ask: '?', deny: '–' };

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

function renderToolbar(panel: Panel, group: ToolGroupView, open: boolean, count: number, asked: number, bodyId: string): Child {
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
      'aria-label': groupAccessibleName(group.label, count, group.tools.length, asked),
      onfocus: remember(0),
      onclick: () => panel.toggleGroup(group.id, group.access),
    },
    h('span', { class: 'chevron', 'aria-hidden': 'true' }, open ? '▾' : '▸'),
    h('span', { class: 'group-label' }, group.label),
    h('span', { class: 'counter' }, counterText(count, group.tools.length, asked)),
  );
  if (!editable) return h('div', { class: 'group-head' }, toggle);
  const action = (index: 1 | 2 | 3, wanted: ToolState, text: string): Child =>
    h(
      'button',
      {
        id: `${TOOLBAR_ITEMS[index]}-${group.id}`,
        class: 'button button-quiet',
        type: 'button',
        tabindex: tabindex(index),
        // Short on screen (the toolbar names the group); complete for assistive technologies.
        'aria-label': `${text} dans ce groupe (${group.label})`,
        onfocus: remember(index),
        onclick: () => panel.edit.setGroup(group.id, wanted),
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
    h(
      'div',
      { class: 'group-actions' },
      action(1, 'allow', 'Tout autoriser'),
      action(2, 'ask', 'Tout demander'),
      action(3, 'deny', 'Tout retirer'),
    ),
  );
}

function renderGroup(panel: Panel, group: ToolGroupView): Child {
  const allowed = panel.shownAllowed();
  const ask = panel.shownAsk();
  const count = group.tools.filter((tool) => allowed.has(tool.name)).length;
  const asked = group.tools.filter((tool) => !allowed.has(tool.name) && ask.has(tool.name)).length;
  const open = panel.groupOpen(group.id, group.access);
  const bodyId = `group-body-${group.id}`;
  const confirmation = panel.state.confirmation;
  const groupConfirmation = confirmation !== null && confirmation.groupId === group.id && confirmation.tools.length > 1;
  return h(
    'div',
    { class: 'group' },
    renderToolbar(panel, group, open, count, asked, bodyId),
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
  const current = toolState(tool.name, panel.shownAllowed(), panel.shownAsk());
  const editable = panel.editable();
  const defaultAllowed = panel.defaultAllowed().has(tool.name);
  const state = rowState(panel.state.target, panel.overriding(), current === 'allow', defaultAllowed, current === 'ask');
  const inheritedLook = panel.state.target.kind === 'agent' && !panel.overriding();
  const confirmation = panel.state.confirmation;
  const awaiting = confirmation !== null && confirmation.tools.length === 1 && confirmation.tools[0] === tool.name;
  const stateId = `state-${tool.name}`;
  const control = editable
    ? null
    : h('span', { class: `mark${current === 'allow' ? ' mark-on' : ''}`, 'aria-hidden': 'true' }, MARKS[current]);
  return h(
    'li',
    { class: `tool-row access-${tool.access}${inheritedLook ? ' inherited' : ''}${editable ? ' editable' : ''}` },
    h(
      'div',
      { class: 'tool-line' },
      control,
      h('span', { class: 'tool-text' }, h('code', { class: 'tool-name' }, tool.name), h('span', { class: 'tool-label' }, tool.label)),
      tool.access === 'read' ? h('span', { class: 'badge badge-read' }, 'Lecture') : h('span', { class: 'badge badge-write' }, 'Écriture'),
      h('span', { id: stateId, class: `state ${STATE_CLASS[state] ?? ''}` }, state, renderGrantBadge(panel, tool.name)),
      editable
        ? renderChoice({
            label: checkboxLabel(tool),
            name: `tool-${tool.name}`,
            current,
            describedBy: stateId,
            onChoose: (wanted) => panel.edit.setTool(tool.name, wanted),
          })
        : null,
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
    'Flèches gauche et droite : Tout autoriser, Tout demander, Tout retirer dans ce groupe.',
  );
}
