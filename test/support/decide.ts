/**
 * A call decided and its effects applied through the given ports, without the decision service's
 * memo or what it keeps: the answer the service must give, which its memo is checked against.
 */
import type { CompiledPolicy } from '../../server/domain/compile.js';
import {
  decide as decideCall,
  type ApprovalsPort,
  type DecisionBody,
  type DecisionInput,
  type EphemeralLookup,
} from '../../server/domain/decide.js';
import type { LimitsPort } from '../../server/domain/limits.js';
import { applyEffects } from '../../server/decisions/apply-effects.js';

export function decide(
  query: DecisionInput,
  policy: CompiledPolicy | undefined,
  ephemeral: EphemeralLookup,
  approvals?: ApprovalsPort,
  limits?: LimitsPort,
): DecisionBody {
  return applyEffects(decideCall(query, policy, ephemeral, approvals, limits), approvals, limits).body;
}
