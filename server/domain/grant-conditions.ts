/**
 * The conditions a temporary grant keeps (docs/api.md#conditions-on-a-tools-arguments): those its
 * tools had in the requester's effective policy when it was made, so that a later edit dropping a
 * condition (the tool taken off ask) never widens what the grant allows. Pure.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { PolicyConditionsSchema, type PolicyConditions, type ToolConditions } from '../../schemas/index.js';
import type { CompiledPolicy } from './compile.js';
import { compileToolConditions, conditionProblem, type ToolChecks } from './conditions.js';

const conditionsCheck = TypeCompiler.Compile(PolicyConditionsSchema);

/** A grant's conditions as written (shown and saved) and compiled (judged), by tool; only tools that have some. */
export interface GrantConditions {
  readonly written: Readonly<PolicyConditions>;
  readonly checks: ReadonlyMap<string, ToolChecks>;
}

export const NO_GRANT_CONDITIONS: GrantConditions = Object.freeze({ written: Object.freeze({}), checks: new Map() });

/**
 * The conditions `tools` have for the agent `agentId` in `policy` now (its override's, else the
 * default's); undefined when the policy is not valid, since nobody can tell what it conditions.
 */
export function conditionsInForce(
  policy: CompiledPolicy | undefined,
  agentId: string,
  tools: readonly string[],
): PolicyConditions | undefined {
  if (policy?.status !== 'ok') return undefined;
  const allowlist = policy.overrides.get(agentId) ?? policy.projectDefault;
  const written: PolicyConditions = {};
  for (const tool of tools) {
    // `conditions` holds only the listed tools that have some: what a decision reads.
    const toolConditions = allowlist.conditions.has(tool) ? allowlist.writtenConditions[tool] : undefined;
    if (toolConditions !== undefined) written[tool] = toolConditions;
  }
  return written;
}

/** Compiles conditions already checked (a policy's own); tools without any are left out. */
export function grantConditions(written: Readonly<PolicyConditions>): GrantConditions {
  const kept: PolicyConditions = {};
  const checks = new Map<string, ToolChecks>();
  for (const [tool, toolConditions] of Object.entries(written)) {
    if (Object.keys(toolConditions).length === 0) continue;
    kept[tool] = toolConditions;
    checks.set(tool, compileToolConditions(toolConditions));
  }
  return Object.keys(kept).length === 0 ? NO_GRANT_CONDITIONS : { written: Object.freeze(kept), checks };
}

/**
 * The conditions of a saved grant (undefined: a file of the previous version, none), or the problem
 * that makes them untrustworthy: a shape a policy could not hold, a condition that could never match,
 * or a tool the grant does not name.
 */
export function savedGrantConditions(saved: unknown, tools: readonly string[]): GrantConditions | string {
  if (saved === undefined) return NO_GRANT_CONDITIONS;
  if (!conditionsCheck.Check(saved)) return 'its conditions are malformed';
  for (const [tool, toolConditions] of Object.entries(saved)) {
    if (!tools.includes(tool)) return 'its conditions name a tool it does not grant';
    if (Object.values<ToolConditions[string]>(toolConditions).some((condition) => conditionProblem(condition) !== undefined)) {
      return 'its conditions could never be met';
    }
  }
  return grantConditions(saved);
}
