/**
 * The left column: "Défaut projet", then the agents with the id `/decide` uses beside the name and
 * warnings for misleading names. With an invalid file it claims no state at all.
 */
import type { AgentPermissions } from '../../../schemas/api.js';
import { agentFlags, showsId, visibleText, type AgentFlag } from '../model/agent-names.js';
import { h, type Child } from '../dom/dom.js';
import { DEFAULT_TARGET, sameTarget, type TargetKey } from '../model/model.js';
import { targetButtonId } from '../state/selectors.js';
import type { Actions } from './actions.js';
import type { PanelState } from '../state/state.js';

export function renderTargets(state: PanelState, actions: Actions): Child {
  const view = state.view;
  if (view === null) return null;
  const flags = agentFlags(view.agents);
  if (view.status === 'invalid') return renderInvalidTargets(view.agents, flags);
  const defaultSummary = view.projectDefault.mode === 'builtin' ? 'Lecture seule' : 'Personnalisé';
  const item = (target: TargetKey, id: string, name: Child, badge: Child): Child => {
    const current = sameTarget(target, state.target);
    const dirty = state.draft !== null && sameTarget(state.draft.target, target);
    return h(
      'li',
      null,
      h(
        'button',
        {
          id,
          type: 'button',
          class: `target${current ? ' target-current' : ''}`,
          'aria-current': current ? 'true' : null,
          onclick: () => {
            actions.selectTarget(target);
          },
        },
        h('span', { class: 'target-name' }, name, dirty ? h('span', { class: 'target-dirty' }, 'Modifications non enregistrées') : null),
        badge,
      ),
    );
  };
  return h(
    'nav',
    { class: 'targets', 'aria-label': 'Cibles' },
    h(
      'ul',
      { class: 'target-list' },
      item(DEFAULT_TARGET, 'target-default', ['Défaut projet', h('span', { class: 'target-sub' }, defaultSummary)], null),
    ),
    h('h2', { class: 'targets-heading' }, 'Agents'),
    view.agents.length === 0
      ? h('p', { class: 'empty' }, 'Aucun agent dans ce projet.')
      : h(
          'ul',
          { class: 'target-list' },
          view.agents.map((agent) =>
            item(
              { kind: 'agent', agentId: agent.agentId },
              targetButtonId({ kind: 'agent', agentId: agent.agentId }),
              agentLabel(agent, flags.get(agent.agentId) ?? []),
              agent.mode === 'override'
                ? h('span', { class: 'badge badge-override' }, 'Override')
                : h('span', { class: 'badge badge-inherit' }, 'Hérité'),
            ),
          ),
        ),
  );
}

/** Name, then the id in monospace when it differs (or is suspect), then the warnings as text. */
export function agentLabel(agent: Pick<AgentPermissions, 'agentId' | 'name' | 'declared'>, flags: AgentFlag[]): Child {
  return [
    h('span', { class: 'agent-name' }, visibleText(agent.name)),
    showsId(agent, flags.length > 0) ? h('span', { class: 'agent-id' }, ' (id ', h('code', null, visibleText(agent.agentId)), ')') : null,
    agent.declared ? null : h('span', { class: 'target-note' }, ' (non déclaré)'),
    flags.map((flag) => h('span', { class: `agent-flag agent-flag-${flag.kind}` }, `⚠ ${flag.text}`)),
  ];
}

/** Agents listed for reference only: no mode, no badge, no count, since every call is denied. */
function renderInvalidTargets(agents: readonly AgentPermissions[], flags: Map<string, AgentFlag[]>): Child {
  return h(
    'nav',
    { class: 'targets targets-invalid', 'aria-label': 'Cibles' },
    h(
      'p',
      { class: 'mode-hint' },
      'Tant que le fichier est invalide, tous les appels de tools de ce projet sont refusés, pour tous les agents : aucun état n\u2019est affiché.',
    ),
    h('h2', { class: 'targets-heading' }, 'Agents déclarés'),
    agents.length === 0
      ? h('p', { class: 'empty' }, 'Aucun agent déclaré.')
      : h(
          'ul',
          { class: 'target-list' },
          agents.map((agent) =>
            h(
              'li',
              { class: 'target target-static' },
              h('span', { class: 'target-name' }, agentLabel(agent, flags.get(agent.agentId) ?? [])),
            ),
          ),
        ),
  );
}
