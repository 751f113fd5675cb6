/**
 * "Détail des tools": the catalog's groups with counters, each headed by a toolbar (the group
 * button, "Tout autoriser dans ce groupe", "Tout retirer dans ce groupe", "Autres actions") that
 * costs one Tab stop; arrows move inside it. When the target is editable, each tool row is one
 * checkbox (checked = Autorisé) whose label is the whole row, and an unchecked write tool has a
 * "Sur demande" toggle beside it. Otherwise the row shows a mark, attenuated while inherited.
 */
import type { Grant } from '../../../schemas/approvals.js';
import type { Actions } from './actions.js';
import { renderConditionsEditor, renderConditionsToggle, rowConditionsText } from './conditions-view.js';
import { limitLineId, renderLimitLine } from './limits-view.js';
import { remainingText } from '../dom/countdown.js';
import { h, type Child } from '../dom/dom.js';
import {
  TOOLBAR_ITEMS,
  askToggleId,
  askToggleLabel,
  checkboxLabel,
  counterText,
  groupAccessibleName,
  rowState,
  toolControlId,
  toolState,
  type CatalogTool,
  type RowState,
  type ToolGroupView,
  type ToolState,
} from '../model/model.js';
import { defaultAllowed, editable, grantFor, groupOpen, overriding, shownAllowed, shownAsk, toolbarStop } from '../state/selectors.js';
import type { PanelState } from '../state/state.js';

const STATE_CLASS: Record<RowState, string> = {
  Autorisé: 'state-allowed',
  Refusé: 'state-denied',
  Hérité: 'state-inherited',
  Ajouté: 'state-added',
  Retiré: 'state-removed',
  'Sur demande': 'state-ask',
  'Sur demande (hérité)': 'state-ask',
  'Autorisé (temporaire)': 'state-temporary',
};

export function renderAccessSection(
  state: PanelState,
  actions: Actions,
  access: 'read' | 'write',
  title: string,
  groups: ToolGroupView[],
): Child {
  const own = groups.filter((group) => group.access === access);
  if (own.length === 0) return null;
  const total = own.reduce((sum, group) => sum + group.tools.length, 0);
  const heading = access === 'read' ? `${title}, autorisés par défaut (${total})` : `${title} (${total})`;
  return h(
    'section',
    { class: `access-section access-${access}`, 'aria-label': heading },
    h('h4', null, heading),
    own.map((group) => renderGroup(state, actions, group)),
  );
}

interface GroupCounts {
  open: boolean;
  allowed: number;
  asked: number;
}

/** The toolbar's roving focus: the one item in the Tab order, and remembering the item focused. */
interface ToolbarFocus {
  tabindex: (index: number) => number;
  remember: (index: number) => () => void;
}

function toolbarFocus(state: PanelState, actions: Actions, groupId: string): ToolbarFocus {
  const stop = toolbarStop(state, groupId);
  return {
    tabindex: (index) => (index === stop ? 0 : -1),
    remember: (index) => () => {
      actions.rememberToolbarFocus(groupId, index);
    },
  };
}

function renderToolbar(state: PanelState, actions: Actions, group: ToolGroupView, counts: GroupCounts, bodyId: string): Child {
  const focus = toolbarFocus(state, actions, group.id);
  const toggle = renderGroupToggle(actions, group, counts, bodyId, focus);
  if (!editable(state)) return h('div', { class: 'group-head' }, toggle);
  const onKeydown = (event: Event): void => {
    if (event instanceof KeyboardEvent && actions.moveToolbarFocus(group.id, event.key)) event.preventDefault();
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
    renderGroupActions(state, actions, group, focus),
  );
}

/** The group button: opens or closes the group, and says its counters. */
function renderGroupToggle(actions: Actions, group: ToolGroupView, counts: GroupCounts, bodyId: string, focus: ToolbarFocus): Child {
  return h(
    'button',
    {
      id: `group-toggle-${group.id}`,
      class: 'group-toggle',
      type: 'button',
      tabindex: focus.tabindex(0),
      'aria-expanded': String(counts.open),
      'aria-controls': bodyId,
      'aria-label': groupAccessibleName(group.label, counts.allowed, group.tools.length, counts.asked),
      onfocus: focus.remember(0),
      onclick: () => {
        actions.toggleGroup(group.id, group.access);
      },
    },
    h('span', { class: 'chevron', 'aria-hidden': 'true' }, counts.open ? '▾' : '▸'),
    h('span', { class: 'group-label' }, group.label),
    h('span', { class: 'counter' }, counterText(counts.allowed, group.tools.length, counts.asked)),
  );
}

/** "Tout autoriser", "Tout retirer" and "Autres actions": the toolbar's items 1 to 3. */
function renderGroupActions(state: PanelState, actions: Actions, group: ToolGroupView, focus: ToolbarFocus): Child {
  const action = (index: 1 | 2, onclick: () => void, text: string): Child =>
    h(
      'button',
      {
        id: `${TOOLBAR_ITEMS[index]}-${group.id}`,
        class: 'button button-quiet',
        type: 'button',
        tabindex: focus.tabindex(index),
        'aria-label': `${text} (${group.label})`,
        onfocus: focus.remember(index),
        onclick,
      },
      text,
    );
  return h(
    'div',
    { class: 'group-actions' },
    action(
      1,
      () => {
        actions.setGroup(group.id, 'allow');
      },
      'Tout autoriser dans ce groupe',
    ),
    action(
      2,
      () => {
        actions.setGroup(group.id, 'deny');
      },
      'Tout retirer dans ce groupe',
    ),
    h(
      'button',
      {
        id: `group-more-${group.id}`,
        class: 'button button-quiet button-more',
        type: 'button',
        tabindex: focus.tabindex(3),
        'aria-expanded': String(state.moreActionsFor === group.id),
        'aria-controls': `group-more-actions-${group.id}`,
        'aria-label': `Autres actions (${group.label})`,
        onfocus: focus.remember(3),
        onclick: () => {
          actions.toggleMoreActions(group.id);
        },
      },
      'Autres actions',
    ),
  );
}

/** "Autres actions" of a group: the rarer "Tout demander dans ce groupe". */
function renderMoreActions(state: PanelState, actions: Actions, group: ToolGroupView): Child {
  if (state.moreActionsFor !== group.id || !editable(state)) return null;
  return h(
    'div',
    { class: 'more-actions', id: `group-more-actions-${group.id}` },
    h(
      'button',
      {
        id: `group-ask-${group.id}`,
        class: 'button',
        type: 'button',
        'aria-label': `Tout demander dans ce groupe (${group.label})`,
        onclick: () => {
          actions.setGroup(group.id, 'ask');
        },
        onkeydown: (event: Event) => {
          if (event instanceof KeyboardEvent && event.key === 'Escape') actions.toggleMoreActions(group.id);
        },
      },
      'Tout demander dans ce groupe',
    ),
  );
}

export function renderGroup(state: PanelState, actions: Actions, group: ToolGroupView): Child {
  const allowed = shownAllowed(state);
  const ask = shownAsk(state);
  const counts = {
    open: groupOpen(state, group.id, group.access),
    allowed: group.tools.filter((tool) => allowed.has(tool.name)).length,
    asked: group.tools.filter((tool) => !allowed.has(tool.name) && ask.has(tool.name)).length,
  };
  const bodyId = `group-body-${group.id}`;
  const confirmation = state.confirmation;
  const groupConfirmation = confirmation !== null && confirmation.groupId === group.id && confirmation.tools.length > 1;
  return h(
    'div',
    { class: 'group' },
    renderToolbar(state, actions, group, counts, bodyId),
    renderMoreActions(state, actions, group),
    h(
      'div',
      { id: bodyId, class: 'group-body', hidden: !counts.open },
      groupConfirmation ? renderConfirmation(actions, confirmation.tools) : null,
      h(
        'ul',
        { class: 'tool-list' },
        group.tools.map((tool) => renderTool(state, actions, tool)),
      ),
    ),
  );
}

function renderTool(state: PanelState, actions: Actions, tool: CatalogTool): Child {
  const current = toolState(tool.name, shownAllowed(state), shownAsk(state));
  const canEdit = editable(state);
  const target = state.target;
  const grant = target.kind === 'agent' && current !== 'allow' ? grantFor(state, target.agentId, tool.name) : undefined;
  const inheritedLook = target.kind === 'agent' && !overriding(state);
  const { texts, describedBy } = renderToolTexts(state, tool, current, grant);
  const rowClass = `tool-row access-${tool.access}${inheritedLook ? ' inherited' : ''}${canEdit ? ' editable' : ''}`;
  if (!canEdit) {
    const mark = current === 'allow' || grant !== undefined ? '✓' : current === 'ask' ? '?' : '–';
    return h(
      'li',
      { class: rowClass },
      h('div', { class: 'tool-line' }, h('span', { class: `mark${mark === '✓' ? ' mark-on' : ''}`, 'aria-hidden': 'true' }, mark), texts),
    );
  }
  const controlId = toolControlId(tool.name);
  // Asking is offered for write tools (and kept visible on any tool already on ask, to clear it).
  const offersAsk = current !== 'allow' && (tool.access === 'write' || current === 'ask');
  const confirmation = state.confirmation;
  const awaiting = confirmation !== null && confirmation.tools.length === 1 && confirmation.tools[0] === tool.name;
  return h(
    'li',
    { class: rowClass },
    h(
      'div',
      { class: 'tool-line' },
      h(
        'label',
        { class: 'tool-check-row', for: controlId },
        h('input', {
          id: controlId,
          class: 'tool-check',
          type: 'checkbox',
          checked: current === 'allow',
          'aria-label': checkboxLabel(tool),
          'aria-describedby': describedBy,
          onchange: (event: Event) => {
            actions.setTool(tool.name, (event.target as HTMLInputElement).checked ? 'allow' : 'deny');
          },
        }),
        texts,
      ),
      offersAsk ? renderAskToggle(actions, tool, current) : null,
      // Conditions and a usage limit narrow a tool the policy lists (allowed or on ask), never a denied one.
      current === 'deny' ? null : renderConditionsToggle(state, actions, tool),
    ),
    awaiting ? renderConfirmation(actions, [tool.name]) : null,
    current === 'deny' ? null : renderConditionsEditor(state, actions, tool),
  );
}

/**
 * What a tool row says: name and label, class badge, state (with a temporary grant's remaining
 * time), conditions and usage limit; and the ids that describe the row's checkbox, state first.
 */
function renderToolTexts(
  state: PanelState,
  tool: CatalogTool,
  current: ToolState,
  grant: Grant | undefined,
): { texts: Child[]; describedBy: string } {
  const rowText = rowState(
    state.target,
    overriding(state),
    current === 'allow',
    defaultAllowed(state).has(tool.name),
    current === 'ask',
    grant !== undefined,
  );
  const stateId = `state-${tool.name}`;
  const stateText = h(
    'span',
    { id: stateId, class: `state ${STATE_CLASS[rowText]}` },
    rowText,
    grant === undefined
      ? null
      : [
          ', encore ',
          h('span', { class: 'until', 'data-until': grant.expiresAt }, remainingText(Date.parse(grant.expiresAt) - Date.now())),
        ],
  );
  const conditions = current === 'deny' ? null : rowConditionsText(state, tool.name);
  const conditionsId = `conditions-${tool.name}`;
  // Its own line under the name; read after the state: « Autorisé · seulement pour les agents QA ».
  const conditionsText =
    conditions === null
      ? null
      : h(
          'span',
          { id: conditionsId, class: 'conditions-text' },
          h('span', { class: 'visually-hidden' }, '· '),
          h('span', { 'aria-hidden': 'true', class: 'conditions-mark' }, '↳ '),
          conditions,
        );
  // A limited tool says so on its own line too: « au plus 20 appels par heure » (docs/api.md#usage-limits).
  const limitLine = current === 'deny' ? null : renderLimitLine(state, tool.name);
  const limitId = current === 'deny' ? null : limitLineId(state, tool.name);
  const texts = [
    h('span', { class: 'tool-text' }, h('code', { class: 'tool-name' }, tool.name), h('span', { class: 'tool-label' }, tool.label)),
    tool.access === 'read' ? h('span', { class: 'badge badge-read' }, 'Lecture') : h('span', { class: 'badge badge-write' }, 'Écriture'),
    stateText,
    conditionsText,
    limitLine,
  ];
  return { texts, describedBy: [stateId, conditions === null ? null : conditionsId, limitId].filter((id) => id !== null).join(' ') };
}

/** "Sur demande" beside an unchecked write tool: pressed while the tool is on ask. */
function renderAskToggle(actions: Actions, tool: CatalogTool, current: ToolState): Child {
  return h(
    'button',
    {
      id: askToggleId(tool.name),
      class: 'button ask-toggle',
      type: 'button',
      'aria-pressed': String(current === 'ask'),
      'aria-label': askToggleLabel(tool),
      onclick: () => {
        actions.setTool(tool.name, current === 'ask' ? 'deny' : 'ask');
      },
    },
    h('span', { class: 'ask-mark', 'aria-hidden': 'true' }, current === 'ask' ? '●' : '○'),
    ' Sur demande',
  );
}

function renderConfirmation(actions: Actions, tools: string[]): Child {
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
        {
          id: 'confirm-write',
          class: 'button button-primary',
          type: 'button',
          onclick: () => {
            actions.confirmWriteTools();
          },
        },
        'Confirmer',
      ),
      h(
        'button',
        {
          id: 'confirm-write-cancel',
          class: 'button',
          type: 'button',
          onclick: () => {
            actions.cancelWriteTools();
          },
        },
        'Annuler',
      ),
    ),
  );
}

/** The hint every group toolbar points to (rendered once per editor). */
export function renderToolbarHint(): Child {
  return h(
    'p',
    { id: 'toolbar-hint', class: 'visually-hidden' },
    'Flèches gauche et droite : Tout autoriser dans ce groupe, Tout retirer dans ce groupe, Autres actions.',
  );
}
