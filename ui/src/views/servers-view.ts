/**
 * Other MCP servers in the editor (docs/ui.md#other-mcp-servers): one group per declared server
 * after IdeA's (the same rows, counters and toolbar as IdeA's groups), then « Tools inconnus »: the
 * tools a server listed that `.ideai/mcp-servers.json` does not declare, badge « Inconnu », no
 * checkbox, the server's hint in words, and with the admin token « Déclarer », where the user
 * chooses Lecture or Écriture (prefilled from the hint, never declared without that choice).
 */
import type { Actions } from './actions.js';
import { h, type Child } from '../dom/dom.js';
import { renderFrenchError } from './feedback-view.js';
import { renderGroup } from './groups-view.js';
import type { ToolGroupView } from '../model/model.js';
import {
  declareButtonId,
  hintText,
  qualified,
  serverName,
  undeclared,
  type DeclareForm,
  type DeclaredAccess,
  type DiscoveredEntry,
  type ServerEntry,
} from '../model/servers-model.js';
import type { PanelState } from '../state/state.js';

/** A group of the catalog that is a declared server's (`server:<id>`). */
export const isServerGroup = (group: { id: string }): boolean => group.id.startsWith('server:');

/** Declaring writes a file of the project: the admin token, and data that is not stale. */
function canDeclare(state: PanelState): boolean {
  return state.token !== null && state.role === 'admin' && state.view !== null && state.loadError === null;
}

/** « Autres serveurs MCP »: a group per declared server, after IdeA's read and write sections. */
export function renderServerGroups(state: PanelState, actions: Actions, groups: ToolGroupView[]): Child {
  const notice = state.servers.notice;
  if (groups.length === 0 && notice === null) return null;
  const total = groups.reduce((sum, group) => sum + group.tools.length, 0);
  const heading = `Autres serveurs MCP (${total})`;
  return h(
    'section',
    { class: 'access-section access-servers', id: 'servers-section', 'aria-label': heading },
    h('h4', null, heading),
    notice === null ? null : h('p', { class: 'servers-notice', id: 'servers-notice' }, `✓ ${notice}`),
    groups.map((group) => renderGroup(state, actions, group)),
  );
}

/** « Tools inconnus »: what the servers listed that nobody declared yet. */
export function renderDiscovered(state: PanelState, actions: Actions): Child {
  const panel = state.servers;
  const { servers, count } = undeclared(panel.servers);
  if (panel.loadError !== null) {
    return h(
      'section',
      { class: 'access-section access-unknown', 'aria-label': 'Tools inconnus' },
      h('h4', null, 'Tools inconnus'),
      h(
        'div',
        { class: 'banner banner-error' },
        h('p', null, 'Impossible de lire les tools listés par les serveurs MCP.'),
        renderFrenchError(panel.loadError, 'servers-error'),
      ),
    );
  }
  if (count === 0) return null;
  return h(
    'section',
    { class: 'access-section access-unknown discovered', id: 'discovered', 'aria-labelledby': 'discovered-title' },
    h('h4', { id: 'discovered-title' }, `Tools inconnus (${count})`),
    h(
      'p',
      { class: 'mode-hint' },
      'Listés par un serveur MCP mais absents de .ideai/mcp-servers.json : ils sont refusés à tous les agents tant qu\u2019une personne ne les a pas déclarés en lecture ou en écriture.',
    ),
    canDeclare(state) ? null : h('p', { class: 'mode-hint' }, 'Déclarer un tool demande le jeton administrateur.'),
    servers.map((server) =>
      h(
        'div',
        { class: 'discovered-server' },
        h(
          'h5',
          { class: 'discovered-server-title' },
          `${serverName(server)} · ${server.discovered.length} inconnu${server.discovered.length > 1 ? 's' : ''}`,
        ),
        h(
          'ul',
          { class: 'tool-list' },
          server.discovered.map((tool) => renderDiscoveredTool(state, actions, server, tool)),
        ),
      ),
    ),
  );
}

function renderDiscoveredTool(state: PanelState, actions: Actions, server: ServerEntry, tool: DiscoveredEntry): Child {
  const name = qualified(server.id, tool.name);
  const form = state.servers.form;
  const open = form !== null && form.server === server.id && form.tool === tool.name;
  const hintId = `hint-${name}`;
  const label = tool.title ?? tool.annotations.title ?? null;
  return h(
    'li',
    { class: 'tool-row discovered-row' },
    h(
      'div',
      { class: 'discovered-line' },
      h('span', { class: 'mark', 'aria-hidden': 'true' }, '?'),
      h(
        'span',
        { class: 'tool-text' },
        h('code', { class: 'tool-name' }, name),
        h('span', { class: 'tool-label' }, label ?? 'Sans libellé du serveur'),
      ),
      h('span', { class: 'badge badge-unknown' }, 'Inconnu'),
      h('span', { class: 'state state-denied' }, 'Refusé'),
      canDeclare(state)
        ? h(
            'button',
            {
              id: declareButtonId(server.id, tool.name),
              class: 'button declare-button',
              type: 'button',
              'aria-expanded': String(open),
              'aria-label': `Déclarer ${name}`,
              'aria-describedby': hintId,
              onclick: () => {
                if (open) actions.closeDeclare();
                else actions.openDeclare(server.id, tool.name);
              },
            },
            'Déclarer',
          )
        : null,
      h(
        'span',
        { class: 'discovered-hint', id: hintId },
        h('span', { 'aria-hidden': 'true', class: 'conditions-mark' }, '↳ '),
        hintText(tool.annotations),
      ),
      tool.description === null ? null : h('span', { class: 'discovered-description' }, tool.description),
    ),
    open ? renderDeclareForm(state, actions, form, name, tool) : null,
  );
}

function renderDeclareForm(state: PanelState, actions: Actions, form: DeclareForm, name: string, tool: DiscoveredEntry): Child {
  const prefill =
    form.prefilled === null
      ? 'Le serveur ne dit pas si ce tool écrit : choisissez vous-même.'
      : `Prérempli d\u2019après l\u2019indication du serveur (${hintText(tool.annotations)}) : une indication, pas une garantie. Vérifiez avant de déclarer.`;
  return h(
    'div',
    {
      class: 'declare-form',
      id: 'declare-form',
      role: 'group',
      'aria-labelledby': 'declare-title',
      onkeydown: (event: Event) => {
        if (event instanceof KeyboardEvent && event.key === 'Escape') actions.closeDeclare();
      },
    },
    h('p', { id: 'declare-title', class: 'declare-title' }, 'Déclarer ', h('code', null, name)),
    h(
      'fieldset',
      { class: 'declare-access' },
      h('legend', null, 'Classe du tool'),
      renderAccessChoice(actions, form, 'read', 'Lecture', 'autorisé par défaut à tous les agents en lecture seule'),
      renderAccessChoice(actions, form, 'write', 'Écriture', 'refusé par défaut, à accorder agent par agent'),
    ),
    h('p', { class: 'mode-hint', id: 'declare-prefill' }, prefill),
    renderDeclareField('declare-label', 'Libellé en français (facultatif)', form.label, tool.title ?? tool.name, (text) => {
      actions.setDeclareLabel(text);
    }),
    form.newServer
      ? renderDeclareField(
          'declare-server-label',
          `Nom du serveur ${form.server} (facultatif, il sera ajouté au fichier)`,
          form.serverLabel,
          form.server,
          (text) => {
            actions.setDeclareServerLabel(text);
          },
        )
      : null,
    form.problem === null
      ? null
      : h('div', { class: 'banner banner-error', role: 'alert', id: 'declare-error' }, renderFrenchError(form.problem, 'declare-error')),
    form.access === null ? h('p', { class: 'mode-hint', id: 'declare-reason' }, 'Choisissez Lecture ou Écriture pour déclarer.') : null,
    renderDeclareButtons(actions, form, state.servers.busy),
  );
}

/** One of the two classes the user chooses (a radio and what the class does). */
function renderAccessChoice(actions: Actions, form: DeclareForm, access: DeclaredAccess, text: string, effect: string): Child {
  return h(
    'label',
    { class: 'declare-choice', for: `declare-${access}` },
    h('input', {
      id: `declare-${access}`,
      type: 'radio',
      name: 'declare-access',
      value: access,
      checked: form.access === access,
      onchange: () => {
        actions.setDeclareAccess(access);
      },
    }),
    h('span', { class: 'declare-choice-text' }, h('strong', null, text), h('span', { class: 'mode-hint' }, ` — ${effect}`)),
  );
}

/** An optional text field of the form (the tool's label, a new server's name). */
function renderDeclareField(id: string, label: string, value: string, placeholder: string, onInput: (text: string) => void): Child {
  return h(
    'label',
    { class: 'declare-field', for: id },
    h('span', null, label),
    h('input', {
      id,
      type: 'text',
      maxlength: 120,
      value,
      placeholder,
      oninput: (event: Event) => {
        onInput((event.target as HTMLInputElement).value);
      },
    }),
  );
}

/** « Déclarer » (inert until a class is chosen, or while a declaration is sent) and « Annuler ». */
function renderDeclareButtons(actions: Actions, form: DeclareForm, busy: boolean): Child {
  const blocked = busy || form.access === null;
  return h(
    'div',
    { class: 'button-row' },
    h(
      'button',
      {
        id: 'declare-confirm',
        class: 'button button-primary',
        type: 'button',
        'aria-disabled': blocked ? 'true' : null,
        'aria-describedby': form.access === null ? 'declare-reason' : null,
        onclick: () => {
          actions.declare();
        },
      },
      busy ? 'Déclaration…' : 'Déclarer',
    ),
    h(
      'button',
      {
        id: 'declare-cancel',
        class: 'button',
        type: 'button',
        onclick: () => {
          actions.closeDeclare();
        },
      },
      'Annuler',
    ),
  );
}
