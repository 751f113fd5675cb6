/**
 * The right column: title (with the agent's id), mode, effective summary, "Accord rapide", the
 * tools grouped by domain, and the action bar with its conflict, problem and confirmation.
 */
import { agentFlags, showsId, visibleText } from './agent-names.js';
import { changeText, type Change } from './draft-rebase.js';
import { h, type Child } from './dom.js';
import { renderChoice } from './choice-view.js';
import { renderNotice, renderProblem } from './feedback-view.js';
import { renderAccessSection, renderToolbarHint } from './groups-view.js';
import { differenceText, findAgent, groupTools, sameTarget, summaryText } from './model.js';
import type { Panel } from './panel.js';
import { quickGrantState, quickGrantText, quickGrants } from './quick-grants.js';

export function renderEditor(panel: Panel): Child {
  const { catalog } = panel.state;
  const saved = panel.saved();
  if (catalog === null) return h('section', { class: 'editor' });
  if (saved === undefined) {
    // The edited agent vanished elsewhere: only the conflict (keep mine / take theirs) remains.
    return h('section', { class: 'editor', 'aria-labelledby': 'editor-title' }, renderTitle(panel), renderActions(panel));
  }
  const allowed = panel.shownAllowed();
  const groups = groupTools(catalog);
  return h(
    'section',
    { class: 'editor', 'aria-labelledby': 'editor-title' },
    renderTitle(panel),
    renderSwitchDialog(panel),
    renderMode(panel),
    h(
      'div',
      { class: 'summary' },
      h('h3', { id: 'summary-title' }, 'Résumé effectif'),
      h('p', { id: 'summary', 'aria-live': 'polite' }, summaryText(catalog, allowed, panel.shownAsk())),
    ),
    renderQuickGrants(panel),
    renderRedundant(panel),
    h('h3', { class: 'detail-title' }, 'Détail des tools'),
    renderToolbarHint(),
    renderAccessSection(panel, 'read', 'Lecture', groups),
    renderAccessSection(panel, 'write', 'Écriture et actions', groups),
    renderUnknown(panel, saved.unknownTools),
    renderActions(panel),
  );
}

function renderTitle(panel: Panel): Child {
  const { target, view } = panel.state;
  if (target.kind === 'default' || view === null) return h('h2', { id: 'editor-title', tabindex: -1 }, 'Tools MCP IdeA — Défaut projet');
  const agent = findAgent(view, target.agentId) ?? { agentId: target.agentId, name: target.agentId };
  const flags = agentFlags(view.agents).get(target.agentId) ?? [];
  return [
    h(
      'h2',
      { id: 'editor-title', tabindex: -1 },
      `Tools MCP IdeA — ${visibleText(agent.name)}`,
      showsId(agent, flags.length > 0) ? h('span', { class: 'agent-id' }, ' (id ', h('code', null, visibleText(agent.agentId)), ')') : null,
    ),
    flags.length === 0
      ? null
      : h(
          'div',
          { class: 'banner banner-warning', id: 'agent-warning' },
          flags.map((flag) => h('p', null, `⚠ ${flag.text}`)),
          h('p', null, 'Vérifiez l\u2019identifiant avant d\u2019accorder un tool : c\u2019est lui que /decide reçoit.'),
        ),
  ];
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
  const resetButton = (id: string, text: string): Child =>
    h(
      'button',
      { id, class: 'button', type: 'button', 'aria-disabled': busy ? 'true' : null, onclick: () => void panel.writes.reset() },
      text,
    );
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
      canWrite && saved.overriding ? resetButton('reset-default', 'Revenir à la lecture seule') : null,
      renderUndo(panel),
    );
  }
  const overriding = panel.overriding();
  const difference = overriding
    ? differenceText(catalog, panel.shownAllowed(), panel.defaultAllowed(), panel.shownAsk(), panel.defaultAsk())
    : null;
  const refusal = panel.overrideRefusal();
  return h(
    'div',
    { class: 'mode' },
    h('p', { class: 'mode-label' }, overriding ? 'Override personnalisé' : 'Hérite du défaut projet'),
    difference === null ? null : h('p', { class: 'mode-hint', id: 'difference' }, difference),
    refusal !== null
      ? h(
          'p',
          { class: 'mode-hint', id: 'override-refusal' },
          `Aucun override possible pour cet agent : ${refusal}. Corrigez son identifiant dans agents.json.`,
        )
      : null,
    !overriding && canWrite && refusal === null
      ? h(
          'button',
          { id: 'create-override', class: 'button button-primary', type: 'button', onclick: () => panel.edit.createOverride() },
          'Créer un override',
        )
      : null,
    !overriding && !canWrite && panel.state.token === null
      ? h('p', { class: 'mode-hint' }, 'Consultation seulement : saisissez le jeton administrateur pour modifier.')
      : null,
    saved.overriding && canWrite ? resetButton('reset-override', 'Réinitialiser l\u2019override') : null,
    draft?.createsOverride === true && sameTarget(draft.target, target)
      ? h('p', { class: 'mode-hint' }, 'Override créé à partir de l\u2019état hérité : il sera enregistré avec Enregistrer.')
      : null,
    renderUndo(panel),
    renderAgentRequests(panel, target.agentId),
  );
}

/** The agent's pending requests, one click from their answers in "Demandes". */
function renderAgentRequests(panel: Panel, agentId: string): Child {
  const count = panel.state.requests.pending.filter((request) => request.requester === agentId).length;
  if (count === 0) return null;
  return h(
    'p',
    { class: 'mode-hint agent-requests', id: 'agent-requests' },
    count === 1
      ? '1 demande d\u2019approbation en attente pour cet agent. '
      : `${count} demandes d\u2019approbation en attente pour cet agent. `,
    h(
      'button',
      { id: 'agent-requests-open', class: 'button button-quiet', type: 'button', onclick: () => panel.openRequests() },
      'Voir les demandes',
    ),
  );
}

/** After a reset, for a few seconds: what was done and "Annuler", where the reset button was. */
function renderUndo(panel: Panel): Child {
  const undo = panel.state.undo;
  if (undo === null || !sameTarget(undo.target, panel.state.target)) return null;
  return h(
    'div',
    { class: 'undo-notice' },
    h('p', null, undo.message),
    h('button', { id: 'undo', class: 'button', type: 'button', onclick: () => void panel.writes.undo() }, 'Annuler'),
  );
}

function renderQuickGrants(panel: Panel): Child {
  const { catalog, target } = panel.state;
  if (catalog === null || target.kind !== 'agent') return null;
  const allowed = panel.shownAllowed();
  const ask = panel.shownAsk();
  const writable = panel.canWrite() && panel.overrideRefusal() === null;
  const marks = { allow: '✓', ask: '?', deny: '–', mixed: '±' } as const;
  return h(
    'fieldset',
    { class: 'quick-grants', id: 'quick-grants' },
    h('legend', null, 'Accord rapide'),
    quickGrants(catalog).map((grant) => {
      const id = `quick-${grant.id}`;
      const state = quickGrantState(grant, allowed, ask);
      const stateClass = state === 'allow' ? 'state-added' : state === 'ask' ? 'state-ask' : 'state-denied';
      const text = h('span', { id: `${id}-state`, class: `state ${stateClass}` }, quickGrantText(grant, allowed, ask));
      const names = h('span', { class: 'quick-tools', id: `${id}-tools` }, grant.tools.join(', '));
      return h(
        'div',
        { class: `quick-grant${writable ? ' editable' : ''}` },
        writable ? null : h('span', { class: `mark${state === 'allow' ? ' mark-on' : ''}`, 'aria-hidden': 'true' }, marks[state]),
        h('span', { class: 'quick-label', id: `${id}-label` }, grant.label),
        text,
        names,
        writable
          ? renderChoice({
              label: grant.label,
              name: id,
              current: state,
              describedBy: `${id}-state ${id}-tools`,
              onChoose: (wanted) => panel.edit.setQuickGrant(grant.id, wanted),
            })
          : null,
      );
    }),
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
            'aria-disabled': panel.state.saving ? 'true' : null,
            onclick: () => void panel.writes.reset(),
          },
          'Supprimer l\u2019override inutile',
        )
      : null,
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
          { id: 'drop-unknown', class: 'button', type: 'button', onclick: () => panel.edit.dropUnknown() },
          'Retirer les tools inconnus',
        )
      : null,
  );
}

function renderConflict(panel: Panel): Child {
  const conflict = panel.state.conflict;
  if (conflict === null) return null;
  const { sides } = conflict;
  const side = (title: string, change: Change, extra: string | null): Child =>
    h(
      'div',
      { class: 'conflict-side' },
      h('h4', null, title),
      h('p', { class: 'mono' }, changeText(change)),
      extra === null ? null : h('p', null, extra),
    );
  return h(
    'div',
    { class: 'banner banner-warning conflict', role: 'alert', id: 'conflict' },
    h(
      'p',
      null,
      `« ${panel.targetName(conflict.target)} » a été modifié ailleurs pendant votre édition. Vos modifications sont conservées : choisissez la version à garder.`,
    ),
    h(
      'div',
      { class: 'conflict-sides' },
      side('Vos modifications', sides.mine, null),
      side(
        'Modifié ailleurs',
        sides.theirs,
        [sides.theirsMode, sides.defaultChanged === null ? null : `défaut projet : ${changeText(sides.defaultChanged)}`]
          .filter((part) => part !== null)
          .join(' ; ') || null,
      ),
    ),
    h(
      'div',
      { class: 'button-row' },
      h(
        'button',
        { id: 'conflict-keep', class: 'button button-primary', type: 'button', onclick: () => void panel.writes.keepMine() },
        conflict.fromSave ? 'Garder mes modifications et enregistrer' : 'Garder mes modifications',
      ),
      h(
        'button',
        { id: 'conflict-theirs', class: 'button', type: 'button', onclick: () => panel.writes.takeTheirs() },
        'Prendre l\u2019autre version',
      ),
    ),
  );
}

/** The policy changed elsewhere under a draft that this change does not touch: the draft is kept. */
function renderDrift(panel: Panel): Child {
  const { drift, draft, conflict } = panel.state;
  if (drift === null || draft === null || conflict !== null) return null;
  return h('div', { class: 'banner banner-info', id: 'drift-notice' }, h('p', null, drift));
}

function renderActions(panel: Panel): Child {
  const { saving, confirmation, conflict, draft } = panel.state;
  const editable = panel.editable();
  const dirty = draft !== null && sameTarget(draft.target, panel.state.target);
  const blocked = !dirty || saving || confirmation !== null || conflict !== null;
  return h(
    'div',
    { class: 'actions-area' },
    renderDrift(panel),
    renderConflict(panel),
    renderProblem(panel),
    editable || dirty
      ? h(
          'div',
          { class: 'actions' },
          dirty ? h('p', { class: 'dirty-note' }, 'Modifications non enregistrées') : null,
          confirmation !== null
            ? h('p', { class: 'mode-hint' }, 'Confirmez ou annulez la modification du défaut projet avant d\u2019enregistrer.')
            : null,
          renderNotice(panel),
          dirty
            ? h(
                'button',
                {
                  id: 'cancel-draft',
                  class: 'button button-main',
                  type: 'button',
                  'aria-disabled': saving ? 'true' : null,
                  onclick: () => panel.edit.cancelDraft(),
                },
                'Annuler',
              )
            : null,
          // aria-disabled rather than disabled: the button keeps the focus after a save.
          h(
            'button',
            {
              id: 'save',
              class: 'button button-main button-primary',
              type: 'button',
              'aria-disabled': blocked ? 'true' : null,
              onclick: () => void panel.writes.save(),
            },
            saving ? 'Enregistrement…' : 'Enregistrer',
          ),
        )
      : renderNotice(panel),
  );
}
