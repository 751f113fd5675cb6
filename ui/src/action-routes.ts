/**
 * Which controller answers each action of the views, and under which method: the one table the
 * composition root binds, so a new action is one line here and a typo or a wrong signature is a
 * compile error (the table must cover exactly the names of {@link Actions}).
 */
import type { Actions } from './views/actions.js';
import type { ConditionEdits } from './controllers/condition-edits.js';
import type { Denials } from './controllers/denials.js';
import type { Editing } from './controllers/editing.js';
import type { LimitEdits } from './controllers/limit-edits.js';
import type { Navigation } from './controllers/navigation.js';
import type { Requests } from './controllers/requests.js';
import type { Servers } from './controllers/servers.js';
import type { Writes } from './controllers/writes.js';

/** The controllers the views' actions go to, by the name the table uses. */
export interface Controllers {
  navigation: Navigation;
  editing: Editing;
  conditions: ConditionEdits;
  limits: LimitEdits;
  writes: Writes;
  requests: Requests;
  denials: Denials;
  servers: Servers;
}

/** The action's arguments as a function type: a method type alone would compare its arguments both ways. */
type Taking<F extends (...args: never[]) => unknown> = (...args: Parameters<F>) => unknown;

/** The public methods of `T` that can stand for the action `F` (its arguments, any result). */
type MethodsFor<T, F extends (...args: never[]) => unknown> = { [M in keyof T]: T[M] extends Taking<F> ? M : never }[keyof T];

/** A controller and one of its methods that fits the action `K`. */
type Route<K extends keyof Actions> = { [C in keyof Controllers]: readonly [C, MethodsFor<Controllers[C], Actions[K]>] }[keyof Controllers];

export const ACTION_ROUTES = {
  // navigation and token
  reloadView: ['navigation', 'reloadView'],
  retryLoad: ['navigation', 'load'],
  selectTarget: ['navigation', 'selectTarget'],
  selectProject: ['navigation', 'selectProject'],
  setTab: ['navigation', 'setTab'],
  showRequests: ['navigation', 'showRequests'],
  toggleGroup: ['navigation', 'toggleGroup'],
  confirmSwitch: ['navigation', 'confirmSwitch'],
  cancelSwitch: ['navigation', 'cancelSwitch'],
  submitToken: ['navigation', 'submitToken'],
  forgetToken: ['navigation', 'forgetToken'],
  openTokenForm: ['navigation', 'openTokenForm'],
  dismissTokenForm: ['navigation', 'dismissTokenForm'],
  closeLiveNotice: ['navigation', 'closeLiveNotice'],
  // the draft
  createOverride: ['editing', 'createOverride'],
  setTool: ['editing', 'setTool'],
  setGroup: ['editing', 'setGroup'],
  setQuickGrant: ['editing', 'setQuickGrant'],
  fixDenial: ['editing', 'fixDenial'],
  confirmWriteTools: ['editing', 'confirmWriteTools'],
  cancelWriteTools: ['editing', 'cancelWriteTools'],
  dropUnknown: ['editing', 'dropUnknown'],
  cancelDraft: ['editing', 'cancelDraft'],
  toggleMoreActions: ['editing', 'toggleMoreActions'],
  moveToolbarFocus: ['editing', 'moveToolbarFocus'],
  rememberToolbarFocus: ['editing', 'rememberToolbarFocus'],
  // conditions on a tool's arguments
  toggleConditions: ['conditions', 'toggle'],
  showConditions: ['conditions', 'show'],
  closeConditions: ['conditions', 'close'],
  addConditionRow: ['conditions', 'addRow'],
  setConditionArgument: ['conditions', 'setArgument'],
  setConditionOperator: ['conditions', 'setOperator'],
  addConditionValue: ['conditions', 'addValue'],
  removeConditionValue: ['conditions', 'removeValue'],
  removeConditionRow: ['conditions', 'removeRow'],
  // usage limits
  addLimit: ['limits', 'add'],
  setLimitMax: ['limits', 'setMax'],
  setLimitCount: ['limits', 'setCount'],
  setLimitUnit: ['limits', 'setUnit'],
  removeLimit: ['limits', 'remove'],
  raiseLimit: ['limits', 'raise'],
  // writes
  save: ['writes', 'save'],
  keepMine: ['writes', 'keepMine'],
  takeTheirs: ['writes', 'takeTheirs'],
  reset: ['writes', 'reset'],
  undo: ['writes', 'undo'],
  chooseRepair: ['writes', 'chooseRepair'],
  cancelRepair: ['writes', 'cancelRepair'],
  confirmRepair: ['writes', 'confirmRepair'],
  // approvals, grants and refusals
  refreshRequests: ['requests', 'refresh'],
  showDurations: ['requests', 'showDurations'],
  answer: ['requests', 'answer'],
  revoke: ['requests', 'revoke'],
  refreshDenials: ['denials', 'refresh'],
  // other MCP servers
  openDeclare: ['servers', 'openDeclare'],
  closeDeclare: ['servers', 'closeDeclare'],
  setDeclareAccess: ['servers', 'setDeclareAccess'],
  setDeclareLabel: ['servers', 'setDeclareLabel'],
  setDeclareServerLabel: ['servers', 'setDeclareServerLabel'],
  declare: ['servers', 'declare'],
} as const satisfies { readonly [K in keyof Actions]: Route<K> };

type Method = (...args: unknown[]) => unknown;

/** The views' actions, each calling its controller's method with the arguments the view gave. */
export function bindActions(controllers: Controllers): Actions {
  const actions: Record<string, Method> = {};
  for (const [name, [controller, method]] of Object.entries(ACTION_ROUTES)) {
    // The table's type has checked that this method exists and fits the action.
    const target = controllers[controller] as unknown as Record<string, Method>;
    actions[name] = (...args) => target[method]?.(...args);
  }
  return actions as unknown as Actions;
}
