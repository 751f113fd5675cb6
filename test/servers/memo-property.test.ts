/**
 * docs/api.md#other-mcp-servers-tools: the decision memo never answers a call with a decision made
 * under another catalog. Random policies naming declared `<server>/<tool>` tools, compiled under
 * catalogs that declare, reclassify or drop them, with grants, once answers and reloads between
 * them: the service (which memoizes) answers exactly what a fresh decide() does. Conditions name
 * arguments the server's reported `inputSchema` lists or not, reports come and go between calls, and
 * a policy is sometimes compiled under the catalog view that knows those arguments: none of it
 * changes a decision.
 */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { DecideQuery, Decision, PolicyDocument, ToolConditions } from '../../schemas/index.js';
import { compileDocument, type CompiledPolicy } from '../../server/domain/compile.js';
import { checkArguments, compileToolConditions, type ToolChecks } from '../../server/domain/conditions.js';
import { ephemeralGrant, type ApprovalsPort, type EphemeralLookup } from '../../server/domain/decide.js';
import { decide } from '../support/decide.js';
import { IDEA_CATALOG, projectCatalog, type ProjectCatalog } from '../../server/domain/project-catalog.js';
import { DecisionService } from '../../server/decisions/decision-service.js';
import { DiscoveredTools } from '../../server/servers/discovered-tools.js';

const TOOLS = ['fs/read_text_file', 'fs/write_file', 'fs/resources/read', 'idea_memory_read', 'idea_memory_write'];
const AGENTS = ['QA', 'Dev'];
const REQUESTERS = [...AGENTS, 'Main', 'mcp', 'ticket-assistant:demo:82'];
const VALUES = ['/tmp/a', '/etc/passwd', '', 1];
/** `path` and `head` are what the server lists; `pth` is a typo of a condition's author. */
const ARGUMENTS = ['path', 'pth', 'head'];

/** Declares fs's two tools as given (undefined: not declared). */
function catalogOf(read: 'read' | 'write' | undefined, write: 'read' | 'write' | undefined, revision: string): ProjectCatalog {
  const tools = {
    ...(read === undefined ? {} : { read_text_file: { access: read } }),
    ...(write === undefined ? {} : { write_file: { access: write } }),
  };
  return projectCatalog({ version: 1, servers: { fs: { tools } } }, revision);
}

const CATALOGS: ProjectCatalog[] = [
  catalogOf('read', 'write', 'c0'),
  catalogOf('write', 'write', 'c1'),
  catalogOf(undefined, 'read', 'c2'),
  IDEA_CATALOG,
];

const conditionArb = fc.oneof(
  fc.record({ in: fc.array(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 2 }) }),
  fc.constant({ absent: true as const }),
);

const policyArb = fc
  .record({
    placement: fc.array(fc.constantFrom('allow', 'ask', 'none'), { minLength: TOOLS.length, maxLength: TOOLS.length }),
    conditioned: fc.array(fc.option(conditionArb, { nil: undefined }), { minLength: TOOLS.length, maxLength: TOOLS.length }),
    argument: fc.constantFrom(...ARGUMENTS),
  })
  .map(({ placement, conditioned, argument }) => ({
    allowedTools: TOOLS.filter((_, index) => placement[index] === 'allow'),
    askTools: TOOLS.filter((_, index) => placement[index] === 'ask'),
    conditions: Object.fromEntries(
      TOOLS.flatMap((tool, index) => {
        const condition = conditioned[index];
        return placement[index] !== 'none' && condition !== undefined ? [[tool, { [argument]: condition }]] : [];
      }),
    ),
  }));

const documentArb = fc
  .record({
    projectDefault: fc.option(policyArb, { nil: undefined }),
    overrides: fc.array(fc.option(policyArb, { nil: undefined }), { minLength: 2, maxLength: 2 }),
  })
  .map(({ projectDefault, overrides }): PolicyDocument => ({
    version: 1,
    ...(projectDefault === undefined ? {} : { projectDefault }),
    agents: AGENTS.flatMap((agentId, index) => {
      const policy = overrides[index];
      return policy === undefined ? [] : [{ agentId, policy }];
    }),
  }));

type Step =
  | { kind: 'call'; query: DecideQuery }
  | { kind: 'grant'; requester: string; tool: string; conditions: ToolConditions }
  | { kind: 'once'; requester: string; tool: string }
  | { kind: 'reload'; document: number; catalog: number; withArguments: boolean }
  | { kind: 'report'; listed: readonly string[] | undefined };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({
        requester: fc.constantFrom(...REQUESTERS),
        tool: fc.constantFrom(...TOOLS, 'fs/delete_file', 'read_text_file'),
        args: fc.option(fc.dictionary(fc.constantFrom(...ARGUMENTS), fc.constantFrom(...VALUES)), { nil: undefined }),
      })
      .map(({ requester, tool, args }): Step => ({
        kind: 'call',
        query: { project: 'demo', requester, tool, ...(args === undefined ? {} : { arguments: args }) },
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        requester: fc.constantFrom(...AGENTS),
        tool: fc.constantFrom(...TOOLS),
        conditions: fc.oneof(
          fc.constant({}),
          conditionArb.map((condition) => ({ path: condition })),
        ),
      })
      .map((one): Step => ({ kind: 'grant', ...one })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ requester: fc.constantFrom(...AGENTS), tool: fc.constantFrom(...TOOLS) })
      .map((one): Step => ({ kind: 'once', ...one })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ document: fc.nat(1), catalog: fc.nat(CATALOGS.length - 1), withArguments: fc.boolean() })
      .map((one): Step => ({ kind: 'reload', ...one })),
  },
  {
    weight: 1,
    arbitrary: fc.option(fc.subarray(['path', 'head']), { nil: undefined }).map((listed): Step => ({ kind: 'report', listed })),
  },
);

class FakeApprovals implements ApprovalsPort {
  readonly grants = new Map<string, ToolChecks>();
  readonly onces = new Set<string>();
  granted(
    _project: string,
    requester: string,
    tool: string,
    args: Readonly<Record<string, unknown>> | undefined,
  ): ReturnType<ApprovalsPort['granted']> {
    const checks = this.grants.get(`${requester}\u0000${tool}`);
    return checks === undefined ? { kind: 'none' } : checkArguments(checks, args);
  }
  consumeOnce(_project: string, requester: string, tool: string): boolean {
    return this.onces.delete(`${requester}\u0000${tool}`);
  }
  request(): ReturnType<ApprovalsPort['request']> {
    return { kind: 'pending', approval: { id: 'r1', status: 'pending', expiresAt: '2030-01-01T00:00:00.000Z' } };
  }
}

// Registered under IdeA's catalog alone: each decision builds it again under the project's catalog of the moment.
const EPHEMERAL: EphemeralLookup = (_project, requester) =>
  requester === 'ticket-assistant:demo:82' ? ephemeralGrant(['fs/write_file', 'fs/read_text_file', 'idea_memory_read'], null) : undefined;

const withoutId = ({ decisionId: _id, ...body }: Decision) => body;

describe('the decision memo under a changing servers catalog', () => {
  it('always answers what a fresh decision answers, whatever catalog the policy was compiled under', () => {
    fc.assert(
      fc.property(
        fc.array(documentArb, { minLength: 2, maxLength: 2 }),
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        (documents, steps) => {
          const discovered = new DiscoveredTools({ now: () => (now += 60_000) });
          let now = 0;
          const compiled = (document: number, catalog: number, withArguments = false): CompiledPolicy => {
            const base = CATALOGS[catalog] ?? IDEA_CATALOG;
            return compileDocument(
              documents[document] ?? { version: 1 },
              `rev${document}`,
              withArguments ? discovered.catalogWithArguments('demo', base) : base,
            );
          };
          let policy = compiled(0, 0);
          /** The same document under the plain catalog: what the server reported is not in it. */
          let plain = policy;
          const memoized = new FakeApprovals();
          const fresh = new FakeApprovals();
          const service = new DecisionService({
            projects: { policyOf: () => policy },
            ephemeral: EPHEMERAL,
            approvals: memoized,
            logger: pino({ enabled: false }),
          });
          for (const step of steps) {
            if (step.kind === 'reload') {
              policy = compiled(step.document, step.catalog, step.withArguments);
              plain = compiled(step.document, step.catalog);
            } else if (step.kind === 'report') {
              const inputSchema =
                step.listed === undefined ? undefined : { properties: Object.fromEntries(step.listed.map((name) => [name, {}])) };
              const tools = ['read_text_file', 'write_file'].map((name) => ({
                name,
                ...(inputSchema === undefined ? {} : { inputSchema }),
              }));
              discovered.report('demo', 'fs', tools, policy.status === 'ok' ? policy.catalog : IDEA_CATALOG);
            } else if (step.kind === 'grant') {
              for (const approvals of [memoized, fresh])
                approvals.grants.set(`${step.requester}\u0000${step.tool}`, compileToolConditions(step.conditions));
            } else if (step.kind === 'once') {
              for (const approvals of [memoized, fresh]) approvals.onces.add(`${step.requester}\u0000${step.tool}`);
            } else {
              // Under the plain catalog, with copies of the approvals (a once is used up by one decision only).
              const copy = new FakeApprovals();
              for (const [key, checks] of fresh.grants) copy.grants.set(key, checks);
              for (const key of fresh.onces) copy.onces.add(key);
              const unreported = decide(step.query, plain, EPHEMERAL, copy);
              const answer = withoutId(service.decide(step.query));
              expect(answer).toEqual(decide(step.query, policy, EPHEMERAL, fresh));
              expect(answer).toEqual(unreported);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never lets a declaration outlive its catalog: the same document decides a dropped tool as unknown', () => {
    const document: PolicyDocument = { version: 1, projectDefault: { allowedTools: ['fs/write_file'] } };
    const declared = compileDocument(document, 'r', CATALOGS[0]);
    const dropped = compileDocument(document, 'r', catalogOf('read', undefined, 'c3'));
    const service = new DecisionService({ projects: { policyOf: () => policy }, ephemeral: EPHEMERAL, logger: pino({ enabled: false }) });
    let policy: CompiledPolicy = declared;
    const query = { project: 'demo', requester: 'QA', tool: 'fs/write_file' };
    expect(service.decide(query)).toMatchObject({ allow: true });
    expect(service.decide(query)).toMatchObject({ allow: true });
    policy = dropped;
    expect(service.decide(query)).toMatchObject({ allow: false, reason: 'unknown_tool' });
    expect(declared.revision).not.toBe(dropped.revision);
  });
});
