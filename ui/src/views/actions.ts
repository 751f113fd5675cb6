/**
 * What the views may ask for: each user action, by name. action-routes.ts says which controller
 * answers each one and main.ts binds them; a view never sees a controller, only the state and
 * these actions.
 */
import type { ApprovalAnswer } from '../../../schemas/approvals.js';
import type { ConditionOperator } from '../../../schemas/conditions.js';
import type { LimitUnit } from '../model/limits-model.js';
import type { ToolState } from '../model/model.js';
import type { TargetKey } from '../model/model.js';
import type { RepairChoice, Tab } from '../state/state.js';

export interface Actions {
  // navigation and token
  reloadView(): void;
  retryLoad(): void;
  selectTarget(target: TargetKey): void;
  selectProject(projectId: string): void;
  setTab(tab: Tab): void;
  showRequests(open: boolean): void;
  toggleGroup(groupId: string, access: 'read' | 'write'): void;
  confirmSwitch(): void;
  cancelSwitch(): void;
  submitToken(value: string): void;
  forgetToken(): void;
  openTokenForm(): void;
  dismissTokenForm(): void;
  closeLiveNotice(): void;
  // the draft
  createOverride(): void;
  setTool(name: string, wanted: ToolState): void;
  setGroup(groupId: string, wanted: ToolState): void;
  setQuickGrant(grantId: string, checked: boolean): void;
  fixDenial(name: string, wanted: 'allow' | 'ask'): void;
  confirmWriteTools(): void;
  cancelWriteTools(): void;
  dropUnknown(): void;
  cancelDraft(): void;
  toggleMoreActions(groupId: string): void;
  /** Arrow keys in a group's toolbar; true when the key was used. */
  moveToolbarFocus(groupId: string, key: string): boolean;
  rememberToolbarFocus(groupId: string, index: number): void;
  // conditions on a tool's arguments (the inline editor of a row)
  toggleConditions(tool: string): void;
  /** Opens a tool's conditions editor (from Refus récents), its group too. */
  showConditions(tool: string): void;
  closeConditions(tool: string): void;
  addConditionRow(tool: string): void;
  setConditionArgument(tool: string, index: number, argument: string): void;
  setConditionOperator(tool: string, index: number, operator: ConditionOperator): void;
  /** Enter in a condition's values field; true when the value was added (the field is then emptied). */
  addConditionValue(tool: string, index: number, text: string): boolean;
  removeConditionValue(tool: string, index: number, valueIndex: number, fromField: boolean): void;
  removeConditionRow(tool: string, index: number): void;
  // usage limits (in the same inline editor as the conditions)
  addLimit(tool: string): void;
  setLimitMax(tool: string, text: string): void;
  setLimitCount(tool: string, text: string): void;
  setLimitUnit(tool: string, unit: LimitUnit): void;
  removeLimit(tool: string): void;
  /** « Relever la limite » on a refusal by a usage limit. */
  raiseLimit(tool: string): void;
  // writes
  save(): void;
  keepMine(): void;
  takeTheirs(): void;
  reset(): void;
  undo(): void;
  chooseRepair(kind: RepairChoice['kind']): void;
  cancelRepair(): void;
  confirmRepair(): void;
  // approvals, grants and refusals
  refreshRequests(): void;
  showDurations(id: string | null): void;
  answer(id: string, answer: ApprovalAnswer, ttlSeconds?: number): void;
  revoke(grantId: string): void;
  refreshDenials(): void;
  // other MCP servers: « Déclarer » a tool they listed
  openDeclare(server: string, tool: string): void;
  closeDeclare(): void;
  setDeclareAccess(access: 'read' | 'write'): void;
  setDeclareLabel(text: string): void;
  setDeclareServerLabel(text: string): void;
  declare(): void;
}
