/**
 * The right column: mode, effective summary, tools grouped by domain, and the action bar.
 */
import { h, type Child } from './dom.js';
import {
  checkboxLabel,
  counterText,
  differenceText,
  groupAccessibleName,
  groupTools,
  rowState,
  summaryText,
  type CatalogTool,
  type ToolGroupView,
} from './model.js';
import type { Panel } from './panel.js';

const STATE_CLASS: Record<string, string> = {
  Autorisé: 'state-allowed',
  Refusé: 'state-denied',
  Hérité: 'state-inherited',
  Ajouté: 'state-added',
  Retiré: 'state-removed',
};

export function renderEditor(panel: Panel): Child {
  const { catalog, target } = panel.state;
  const saved = panel.saved();
  if (catalog === null || saved === undefined) return h('section', { class: 'editor' });
  const allowed = panel.shownAllowed();
  const groups = groupTools(catalog);
  const title = target.kind === 'default' ? 'Défaut projet' : panel.targetName(target);
  return h(
    'section',
    { class: 'editor', 'aria-labelledby': 'editor-title' },
    h('h2', { id: 'editor-title', tabindex: -1 }, `Tools MCP IdeA — ${title}`),
    renderSwitchDialog(panel),
    renderMode(panel),
    h(
      'div',
      { class: 'summary' },
      h('h3', { id: 'summary-title' }, 'Résumé effectif'),
      h('p', { id: 'summary', 'aria-live': 'polite' }, summaryText(catalog, allowed)),
    ),
    renderRedundant(panel),
    h('h3', { class: 'detail-title' }, 'Détail des tools'),
    renderAccessSection(panel, 'read', 'Lecture', groups),
    renderAccessSection(panel, 'write', 'Écriture et actions', groups),
    renderUnknown(panel, saved.unknownTools),
    renderActions(panel),
  );
}

function renderSwitchDialog(panel: Panel): Child {
  const pending = panel.state.pendingSwitch;
  if (pending === null) return null;
  return h(
    'div',
    { class: 'banner banner-warning', role: 'alertdialog', 'aria-labelledby': 'switch-message', 'aria-modal': 'false' },
    h('p', { id: 'switch-message' }, pending.message),
    h(
      'div',
      { class: 'button-row' },
      h(
        'button',
        { id: 'switch-stay', class: 'button button-primary', type: 'button', onclick: () => panel.cancelSwitch() },
        'Continuer l\u2019édition',
      ),
      h(
        'button',
        { id: 'switch-discard', class: 'button button-danger', type: 'button', onclick: () => panel.confirmSwitch() },
        'Abandonner les modifications',
      ),
    ),
  );
}

function renderMode(panel: Panel): Child {
  const { target, catalog, draft } = panel.state;
  const saved = panel.saved();
  if (catalog === null || saved === undefined) return null;
  const canWrite = panel.canWrite();
  const busy = panel.state.saving;
  if (target.kind === 'default') {
    return h(
      'div',
      { class: 'mode' },
      h(
        'p',
        { class: 'mode-label' },
        saved.overriding ? 'Défaut personnalisé' : 'Lecture seule',
        h('span', { class: 'mode-hint' }, ' — appliqué à tous les agents sans override'),
      ),
      canWrite && saved.overriding
        ? h(
            'button',
            { id: 'reset-default', class: 'button', type: 'button', disabled: busy, onclick: () => void panel.deleteOverride() },
            'Revenir à la lecture seule',
          )
        : null,
    );
  }
  const overriding = panel.overriding();
  const difference = overriding ? differenceText(catalog, panel.shownAllowed(), panel.defaultAllowed()) : null;
  return h(
    'div',
    { class: 'mode' },
    h('p', { class: 'mode-label' }, overriding ? 'Override personnalisé' : 'Hérite du défaut projet'),
    difference === null ? null : h('p', { class: 'mode-hint', id: 'difference' }, difference),
    !overriding && canWrite
      ? h(
          'button',
          { id: 'create-override', class: 'button button-primary', type: 'button', onclick: () => panel.createOverride() },
          'Créer un override',
        )
      : null,
    !overriding && !canWrite && panel.state.token === null
      ? h('p', { class: 'mode-hint' }, 'Lecture seule : saisissez le jeton administrateur pour modifier.')
      : null,
    saved.overriding && canWrite
      ? h(
          'button',
          { id: 'reset-override', class: 'button', type: 'button', disabled: busy, onclick: () => void panel.deleteOverride() },
          'Réinitialiser l\u2019override',
        )
      : null,
    draft?.createsOverride === true
      ? h('p', { class: 'mode-hint' }, 'Override créé à partir de l\u2019état hérité : il sera enregistré avec Enregistrer.')
      : null,
  );
}

function renderRedundant(panel: Panel): Child {
  const saved = panel.saved();
  if (saved === undefined || !saved.redundant || !saved.overriding || panel.dirty()) return null;
  return h(
    'div',
    { class: 'banner banner-info' },
    h('p', null, 'Cet override est identique au défaut projet : il ne change rien.'),
    panel.canWrite()
      ? h(
          'button',
          {
            id: 'delete-redundant',
            class: 'button',
            type: 'button',
            disabled: panel.state.saving,
            onclick: () => void panel.deleteOverride(),
          },
          'Supprimer l\u2019override inutile',
        )
      : null,
  );
}

function renderAccessSection(panel: Panel, access: 'read' | 'write', title: string, groups: ToolGroupView[]): Child {
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

function renderGroup(panel: Panel, group: ToolGroupView): Child {
  const allowed = panel.shownAllowed();
  const count = group.tools.filter((tool) => allowed.has(tool.name)).length;
  const open = panel.groupOpen(group.id, group.access);
  const editable = panel.editable();
  const bodyId = `group-body-${group.id}`;
  const confirmation = panel.state.confirmation;
  const groupConfirmation = confirmation !== null && confirmation.groupId === group.id && confirmation.tools.length > 1;
  return h(
    'div',
    { class: 'group' },
    h(
      'div',
      { class: 'group-head' },
      h(
        'button',
        {
          id: `group-toggle-${group.id}`,
          class: 'group-toggle',
          type: 'button',
          'aria-expanded': String(open),
          'aria-controls': bodyId,
          'aria-label': groupAccessibleName(group.label, count, group.tools.length),
          onclick: () => panel.toggleGroup(group.id, group.access),
        },
        h('span', { class: 'chevron', 'aria-hidden': 'true' }, open ? '▾' : '▸'),
        h('span', { class: 'group-label' }, group.label),
        h('span', { class: 'counter' }, counterText(count, group.tools.length)),
      ),
      editable
        ? h(
            'div',
            { class: 'group-actions' },
            h(
              'button',
              {
                id: `group-all-${group.id}`,
                class: 'button button-quiet',
                type: 'button',
                'aria-label': `Tout autoriser dans ce groupe (${group.label})`,
                onclick: () => panel.setGroup(group.id, true),
              },
              'Tout autoriser dans ce groupe',
            ),
            h(
              'button',
              {
                id: `group-none-${group.id}`,
                class: 'button button-quiet',
                type: 'button',
                'aria-label': `Tout retirer dans ce groupe (${group.label})`,
                onclick: () => panel.setGroup(group.id, false),
              },
              'Tout retirer dans ce groupe',
            ),
          )
        : null,
    ),
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
        onchange: (event: Event) => panel.toggleTool(tool.name, (event.target as HTMLInputElement).checked),
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
        { id: 'confirm-write', class: 'button button-primary', type: 'button', onclick: () => panel.confirmWriteTools() },
        'Confirmer',
      ),
      h('button', { id: 'confirm-write-cancel', class: 'button', type: 'button', onclick: () => panel.cancelWriteTools() }, 'Annuler'),
    ),
  );
}

function renderUnknown(panel: Panel, unknownTools: string[]): Child {
  if (unknownTools.length === 0) return null;
  const dropping = panel.state.draft?.dropsUnknown === true;
  return h(
    'section',
    { class: 'access-section access-unknown', 'aria-label': 'Tools inconnus' },
    h('h4', null, `Tools inconnus (${unknownTools.length})`),
    h(
      'p',
      { class: 'mode-hint' },
      'Ces noms ne font pas partie du catalogue : ils n\u2019accordent aucun droit. Ils ne seront pas ré-enregistrés : le prochain enregistrement de cette cible ne garde que les tools du catalogue.',
    ),
    h(
      'ul',
      { class: 'tool-list' },
      unknownTools.map((name) =>
        h(
          'li',
          { class: 'tool-row access-unknown' },
          h(
            'div',
            { class: 'tool-line' },
            h('span', { class: 'mark', 'aria-hidden': 'true' }, '?'),
            h(
              'span',
              { class: 'tool-text' },
              h('code', { class: 'tool-name' }, name),
              h('span', { class: 'tool-label' }, 'Absent du catalogue'),
            ),
            h('span', { class: 'badge badge-unknown' }, 'Inconnu'),
            h('span', { class: 'state state-denied' }, dropping ? 'Retiré' : 'Refusé'),
          ),
        ),
      ),
    ),
    panel.editable() && panel.overriding() && !dropping
      ? h(
          'button',
          { id: 'drop-unknown', class: 'button', type: 'button', onclick: () => panel.dropUnknown() },
          'Retirer les tools inconnus',
        )
      : null,
  );
}

function renderActions(panel: Panel): Child {
  const { saveProblem, saving, savedUntil, confirmation } = panel.state;
  const editable = panel.editable();
  const dirty = panel.dirty();
  const showSaved = savedUntil > Date.now();
  if (!editable && saveProblem === null && !showSaved) return null;
  return h(
    'div',
    { class: 'actions-area' },
    saveProblem === null
      ? null
      : h(
          'div',
          { class: 'banner banner-error', role: 'alert', id: 'save-error' },
          h('p', null, saveProblem.message),
          saveProblem.kind === 'conflict'
            ? h(
                'button',
                { id: 'conflict-reload', class: 'button', type: 'button', onclick: () => panel.reloadAfterConflict() },
                'Recharger',
              )
            : null,
        ),
    h('p', { class: 'saved-status', role: 'status' }, showSaved ? 'Permissions enregistrées' : ''),
    editable
      ? h(
          'div',
          { class: 'actions' },
          dirty ? h('p', { class: 'dirty-note' }, 'Modifications non enregistrées') : null,
          confirmation !== null
            ? h('p', { class: 'mode-hint' }, 'Confirmez ou annulez la modification du défaut projet avant d\u2019enregistrer.')
            : null,
          dirty
            ? h(
                'button',
                { id: 'cancel-draft', class: 'button button-main', type: 'button', disabled: saving, onclick: () => panel.cancelDraft() },
                'Annuler',
              )
            : null,
          h(
            'button',
            {
              id: 'save',
              class: 'button button-main button-primary',
              type: 'button',
              disabled: !dirty || saving || confirmation !== null,
              onclick: () => void panel.save(),
            },
            saving ? 'Enregistrement…' : 'Enregistrer',
          ),
        )
      : null,
  );
}
