/**
 * A proposed policy document as the preview receives it, checked the way `idea-pdp check` checks a
 * file: the request body is the document itself or `{ "document": … }`. Shared by the main thread
 * (small bodies) and the parse worker (big ones), so a hostile 4 MiB body never holds up decisions.
 * What a valid proposal decides is handed back without the names that grant nothing, which keeps
 * what crosses threads small.
 */
import { findTool, isQualifiedToolName, type PolicyDocument, type PolicyProblem } from '../../schemas/index.js';
import type { CompiledPolicy } from '../domain/compile.js';
import { POLICY_FILE, policyProblems } from '../domain/policy-check.js';
import { IDEA_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import { compileChecked, nestedTooDeep } from './parse-checks.js';

export interface ProposalCheck {
  readonly valid: boolean;
  readonly errors: PolicyProblem[];
  /** A valid proposal with only its catalog tool names; null when invalid. */
  readonly document: PolicyDocument | null;
  readonly revision: string;
}

/** `{ "document": … }` and nothing else is the wrapped form; any other body is the document. */
function proposedText(text: string): string {
  // A policy document starts with another key (or has no `document`): not parsed twice.
  if (!/^\s*\{\s*"document"\s*:/.test(text)) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return text;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'document') return text;
  // The text the document would have in its file, so a problem's line and column point into it.
  return `${JSON.stringify((value as { document: unknown }).document, null, 2)}\n`;
}

// Declared tools are kept by their form: the preview compiles the document against the project's catalog, which drops the undeclared.
const known = (names: readonly string[] | undefined): string[] | undefined =>
  names?.filter((name) => findTool(name) !== undefined || isQualifiedToolName(name));

function withCatalogNamesOnly(document: PolicyDocument): PolicyDocument {
  const lists = <P extends { allowedTools: string[]; askTools?: string[] | undefined }>(policy: P): P => {
    const askTools = known(policy.askTools);
    return { ...policy, allowedTools: known(policy.allowedTools) ?? [], ...(askTools === undefined ? {} : { askTools }) };
  };
  return {
    ...document,
    ...(document.projectDefault === undefined ? {} : { projectDefault: lists(document.projectDefault) }),
    ...(document.agents === undefined ? {} : { agents: document.agents.map((agent) => ({ ...agent, policy: lists(agent.policy) })) }),
  };
}

/** `catalog`: the project's, which the proposal's names and conditions are checked against. */
export function checkProposal(bytes: Uint8Array, catalog: ProjectCatalog = IDEA_CATALOG): ProposalCheck {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  // Nesting far deeper than any document is refused before a parse that would take seconds.
  const text = nestedTooDeep(bytes) ? raw : proposedText(raw);
  const policy: CompiledPolicy = compileChecked(text === raw ? bytes : Buffer.from(text, 'utf8'));
  const errors = policyProblems(POLICY_FILE, text, policy, undefined, catalog);
  if (policy.status === 'invalid' || policy.document === null) return { valid: false, errors, document: null, revision: policy.revision };
  return { valid: true, errors, document: withCatalogNamesOnly(policy.document), revision: policy.revision };
}
