/**
 * The right column: title (with the agent's id), mode, the agent's pending requests, effective
 * summary, "Accord rapide", "Refus récents", the tools grouped by domain, and the action bar with
 * its conflict, problem, confirmation and the place of the draft's preview.
 */
import type { Actions } from './actions.js';
import { agentFlags, showsId, visibleText } from '../model/agent-names.js';
import { renderDenials } from './denials-view.js';
import { draftProblem } from '../state/draft-problems.js';
import { changeText, type Change } from '../model/draft-rebase.js';
import { h, type Child } from '../dom/dom.js';
import { renderNotice, renderProblem } from './feedback-view.js';
import { renderAccessSection, renderToolbarHint } from './groups-view.js';
import { differenceText, findAgent, groupTools, sameTarget, summaryText } from '../model/model.js';
import { quickGrantState, quickGrantText, quickGrants } from '../model/quick-grants.js';
import { renderAgentRequests } from './requests-view.js';
import { isServerGroup, renderDiscovered, renderServerGroups } from './servers-view.js';
import * as select from '../state/selectors.js';
import type { PanelState } from '../state/state.js';

export function renderEditor(state: PanelState, actions: Actions): Child {
  const { catalog } = state;
  const saved = select.saved(state);
  if (catalog === null) return h('section', { class: 'editor' });
  if (saved === undefined) {
    // The edited agent vanished elsewhere: only the conflict (keep mine / take theirs) remains.
    return h('section', { class: 'editor', 'aria-labelledby': 'editor-title' }, renderTitle(state), renderActions(state, actions));
  }
  const allowed = select.shownAllowed(state);
  const groups = groupTools(catalog).filter((group) => !isServerGroup(group));
  const serverGroups = groupTools(catalog).filter(isServerGroup);
  return h(
    'section',
    { class: 'editor', 'aria-labelledby': 'editor-title' },
    renderTitle(state),
    renderSwitchDialog(state, actions),
    renderMode(state, actions),
    state.target.kind === 'agent' ? renderAgentRequests(state, actions, state.target.agentId) : null,
    h(
      'div',
      { class: 'summary' },
      h('h3', { id: 'summary-title' }, 'Résumé effectif'),
      h('p', { id: 'summary', 'aria-live': 'polite' }, summaryText(catalog, allowed, select.shownAsk(state), select.grantedTools(state))),
    ),
    renderQuickGrants(state, actions),
    renderDenials(state, actions),
    renderRedundant(state, actions),
    h('h3', { class: 'detail-title' }, 'Détail des tools'),
    renderToolbarHint(),
    renderAccessSection(state, actions, 'read', 'Lecture', groups),
    renderAccessSection(state, actions, 'write', 'Écriture et actions', groups),
    renderServerGroups(state, actions, serverGroups),
    renderDiscovered(state, actions),
    renderUnknown(state, actions, saved.unknownTools),
    renderActions(state, actions),
  );
}

function renderTitle(state: PanelState): Child {
  const { target, view } = state;
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

function renderSwitchDialog(state: PanelState, actions: Actions): Child {
  const pending = state.pendingSwitch;
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
        {
          id: 'switch-stay',
          class: 'button button-primary',
          type: 'button',
          onclick: () => {
            actions.cancelSwitch();
          },
        },
        'Continuer l\u2019édition',
      ),
      h(
        'button',
        {
          id: 'switch-discard',
          class: 'button button-danger',
          type: 'button',
          onclick: () => {
            actions.confirmSwitch();
          },
        },
        'Abandonner les modifications',
      ),
    ),
  );
}

function renderMode(state: PanelState, actions: Actions): Child {
  const { target, catalog, draft } = state;
  const saved = select.saved(state);
  if (catalog === null || saved === undefined) return null;
  const canWrite = select.canWrite(state);
  const busy = state.saving;
  const resetButton = (id: string, text: string): Child =>
    h(
      'button',
      {
        id,
        class: 'button',
        type: 'button',
        'aria-disabled': busy ? 'true' : null,
        onclick: () => {
          actions.reset();
        },
      },
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
      renderUndo(state, actions),
    );
  }
  const isOverride = select.overriding(state);
  const difference = isOverride
    ? differenceText(catalog, select.shownAllowed(state), select.defaultAllowed(state), select.shownAsk(state), select.defaultAsk(state))
    : null;
  const refusal = select.overrideRefusal(state);
  return h(
    'div',
    { class: 'mode' },
    h('p', { class: 'mode-label' }, isOverride ? 'Override personnalisé' : 'Hérite du défaut projet'),
    difference === null ? null : h('p', { class: 'mode-hint', id: 'difference' }, difference),
    refusal !== null
      ? h(
          'p',
          { class: 'mode-hint', id: 'override-refusal' },
          `Aucun override possible pour cet agent : ${refusal}. Corrigez son identifiant dans agents.json.`,
        )
      : null,
    !isOverride && canWrite && refusal === null
      ? h(
          'button',
          {
            id: 'create-override',
            class: 'button button-primary',
            type: 'button',
            onclick: () => {
              actions.createOverride();
            },
          },
          'Créer un override',
        )
      : null,
    !isOverride && !canWrite && state.token === null
      ? h('p', { class: 'mode-hint' }, 'Consultation seulement : saisissez le jeton administrateur pour modifier.')
      : null,
    saved.overriding && canWrite ? resetButton('reset-override', 'Réinitialiser l\u2019override') : null,
    draft?.createsOverride === true && sameTarget(draft.target, target)
      ? h('p', { class: 'mode-hint' }, 'Override créé à partir de l\u2019état hérité : il sera enregistré avec Enregistrer.')
      : null,
    renderUndo(state, actions),
  );
}

/** After a reset, for a few seconds: what was done and "Annuler", where the reset button was. */
function renderUndo(state: PanelState, actions: Actions): Child {
  const undo = state.undo;
  if (undo === null || !sameTarget(undo.target, state.target)) return null;
  return h(
    'div',
    { class: 'undo-notice' },
    h('p', null, undo.message),
    h(
      'button',
      {
        id: 'undo',
        class: 'button',
        type: 'button',
        onclick: () => {
          actions.undo();
        },
      },
      'Annuler',
    ),
  );
}

/**
 * "Accord rapide": one checkbox per bundle, checked when the whole bundle is allowed; a mixed
 * bundle says so in words ("Partiel : 1 sur 4"). Read-only and attenuated until the agent has an
 * override, like the rows.
 */
function renderQuickGrants(state: PanelState, actions: Actions): Child {
  const { catalog, target } = state;
  if (catalog === null || target.kind !== 'agent') return null;
  const allowed = select.shownAllowed(state);
  const ask = select.shownAsk(state);
  const writable = select.editable(state);
  return h(
    'fieldset',
    { class: `quick-grants${writable ? '' : ' inherited'}`, id: 'quick-grants' },
    h('legend', null, 'Accord rapide'),
    writable
      ? null
      : h(
          'p',
          { class: 'mode-hint', id: 'quick-grants-hint' },
          select.overriding(state) ? 'Consultation seulement.' : 'Hérité du défaut projet : « Créer un override » pour modifier.',
        ),
    quickGrants(catalog).map((grant) => {
      const id = `quick-${grant.id}`;
      const bundle = quickGrantState(grant, allowed, ask);
      const stateClass = bundle === 'allow' ? 'state-added' : bundle === 'ask' ? 'state-ask' : 'state-denied';
      return h(
        'div',
        { class: `quick-grant${writable ? ' editable' : ''}` },
        h(
          'label',
          { class: 'quick-check-row', for: id },
          h('input', {
            id,
            class: 'quick-check',
            type: 'checkbox',
            checked: bundle === 'allow',
            indeterminate: bundle === 'mixed' ? true : null,
            disabled: writable ? null : true,
            'aria-describedby': `${id}-state ${id}-tools${writable ? '' : ' quick-grants-hint'}`,
            onchange: (event: Event) => {
              actions.setQuickGrant(grant.id, (event.target as HTMLInputElement).checked);
            },
          }),
          h('span', { class: 'quick-label', id: `${id}-label` }, grant.label),
          h('span', { id: `${id}-state`, class: `state ${stateClass}` }, quickGrantText(grant, allowed, ask)),
          h('span', { class: 'quick-tools', id: `${id}-tools` }, grant.tools.join(', ')),
        ),
      );
    }),
  );
}

function renderRedundant(state: PanelState, actions: Actions): Child {
  const saved = select.saved(state);
  if (saved === undefined || !saved.redundant || !saved.overriding || select.dirty(state)) return null;
  return h(
    'div',
    { class: 'banner banner-info' },
    h('p', null, 'Cet override est identique au défaut projet : il ne change rien.'),
    select.canWrite(state)
      ? h(
          'button',
          {
            id: 'delete-redundant',
            class: 'button',
            type: 'button',
            'aria-disabled': state.saving ? 'true' : null,
            onclick: () => {
              actions.reset();
            },
          },
          'Supprimer l\u2019override inutile',
        )
      : null,
  );
}

function renderUnknown(state: PanelState, actions: Actions, unknownTools: string[]): Child {
  if (unknownTools.length === 0) return null;
  const dropping = state.draft?.dropsUnknown === true;
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
    select.editable(state) && select.overriding(state) && !dropping
      ? h(
          'button',
          {
            id: 'drop-unknown',
            class: 'button',
            type: 'button',
            onclick: () => {
              actions.dropUnknown();
            },
          },
          'Retirer les tools inconnus',
        )
      : null,
  );
}

function renderConflict(state: PanelState, actions: Actions): Child {
  const conflict = state.conflict;
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
      `« ${select.targetName(state, conflict.target)} » a été modifié ailleurs pendant votre édition. Vos modifications sont conservées : choisissez la version à garder.`,
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
        {
          id: 'conflict-keep',
          class: 'button button-primary',
          type: 'button',
          onclick: () => {
            actions.keepMine();
          },
        },
        conflict.fromSave ? 'Garder mes modifications et enregistrer' : 'Garder mes modifications',
      ),
      h(
        'button',
        {
          id: 'conflict-theirs',
          class: 'button',
          type: 'button',
          onclick: () => {
            actions.takeTheirs();
          },
        },
        'Prendre l\u2019autre version',
      ),
    ),
  );
}

/** The policy changed elsewhere under a draft that this change does not touch: the draft is kept. */
function renderDrift(state: PanelState): Child {
  const { drift, draft, conflict } = state;
  if (drift === null || draft === null || conflict !== null) return null;
  return h('div', { class: 'banner banner-info', id: 'drift-notice' }, h('p', null, drift));
}

function renderActions(state: PanelState, actions: Actions): Child {
  const { saving, confirmation, conflict, draft } = state;
  const editable = select.editable(state);
  const dirty = draft !== null && sameTarget(draft.target, state.target);
  const incomplete = dirty ? draftProblem(draft) : null;
  const blocked = !dirty || saving || confirmation !== null || conflict !== null || incomplete !== null;
  return h(
    'div',
    { class: 'actions-area' },
    renderDrift(state),
    renderConflict(state, actions),
    renderProblem(state),
    editable || dirty
      ? h(
          'div',
          { class: 'actions' },
          dirty ? h('p', { class: 'dirty-note' }, 'Modifications non enregistrées') : null,
          confirmation !== null
            ? h('p', { class: 'mode-hint' }, 'Confirmez ou annulez la modification du défaut projet avant d\u2019enregistrer.')
            : null,
          incomplete === null ? null : h('p', { class: 'mode-hint condition-problem', id: 'conditions-incomplete' }, incomplete),
          renderNotice(state),
          dirty ? renderDraftPreview(state) : null,
          dirty
            ? h(
                'button',
                {
                  id: 'cancel-draft',
                  class: 'button button-main',
                  type: 'button',
                  'aria-disabled': saving ? 'true' : null,
                  onclick: () => {
                    actions.cancelDraft();
                  },
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
              'aria-describedby': incomplete === null ? null : 'conditions-incomplete',
              onclick: () => {
                actions.save();
              },
            },
            saving ? 'Enregistrement…' : 'Enregistrer',
          ),
        )
      : renderNotice(state),
  );
}

/**
 * What the draft would have refused or allowed among recent calls, before Enregistrer
 * (« Ce changement aurait refusé 12 appels récents : QA · idea_memory_write ×12 »). A failed
 * preview is one quiet line: saving never depends on it.
 */
function renderDraftPreview(state: PanelState): Child {
  const preview = state.draftPreview;
  if (preview === null) return null;
  if (preview.error !== null)
    return h('p', { class: 'draft-preview draft-preview-error', id: 'draft-preview', 'aria-live': 'polite' }, preview.error);
  if (preview.lines.length === 0) return null;
  return h(
    'div',
    {
      class: preview.pending ? 'draft-preview draft-preview-pending' : 'draft-preview',
      id: 'draft-preview',
      'aria-live': 'polite',
      'aria-busy': preview.pending ? 'true' : null,
    },
    preview.lines.map((line) => h('p', { class: `draft-preview-line draft-preview-${line.kind}` }, line.text)),
  );
}
