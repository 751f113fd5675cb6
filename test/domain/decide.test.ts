import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT, TOOL_CATALOG, type PolicyDocument } from '../../schemas/index.js';
import { builtinPolicy, compileDocument, compilePolicyFile, makeAllowlist, type CompiledPolicy } from '../../server/domain/compile.js';
import { agentIdProblem } from '../../server/domain/agent-id.js';
import { ephemeralGrant, NO_EPHEMERAL, type EphemeralGrant, type EphemeralLookup } from '../../server/domain/decide.js';
import { decide } from '../support/decide.js';

const names = TOOL_CATALOG.map((tool) => tool.name);
const writeTools = TOOL_CATALOG.filter((tool) => tool.access === 'write').map((tool) => tool.name);
const lookup =
  (grants: Record<string, EphemeralGrant>): EphemeralLookup =>
  (project, id) =>
    project === 'demo' && Object.hasOwn(grants, id) ? grants[id] : undefined;
const ask = (policy: CompiledPolicy | undefined, requester: string, tool: string, args?: Record<string, unknown>) =>
  decide({ project: 'demo', requester, tool, arguments: args }, policy, NO_EPHEMERAL);

const toolName = fc.constantFrom(...names);
const agentId = fc.string({ minLength: 1, maxLength: 12 }).filter((id) => agentIdProblem(id) === undefined);
const documentArb: fc.Arbitrary<PolicyDocument> = fc.record(
  {
    version: fc.constant(1 as const),
    projectDefault: fc.record({ allowedTools: fc.uniqueArray(fc.oneof(toolName, fc.string()), { maxLength: 30 }) }),
    agents: fc.uniqueArray(
      fc.record({ agentId, policy: fc.record({ allowedTools: fc.uniqueArray(fc.oneof(toolName, fc.string()), { maxLength: 30 }) }) }),
      { selector: (agent) => agent.agentId, maxLength: 6 },
    ),
  },
  { requiredKeys: ['version'] },
);

describe('decide (pure resolution)', () => {
  it('allows a tool iff it is in the effective allowlist: override > project default > read-only', () => {
    fc.assert(
      fc.property(documentArb, agentId, toolName, (document, requester, tool) => {
        const policy = compileDocument(document, 'r1');
        const override = document.agents?.find((agent) => agent.agentId === requester);
        const effective = override?.policy.allowedTools ?? document.projectDefault?.allowedTools ?? READ_ONLY_DEFAULT;
        const decision = ask(policy, requester, tool);
        expect(decision.allow).toBe(effective.includes(tool));
        expect(decision.source).toBe(override ? 'agent-override' : document.projectDefault ? 'project-default' : 'builtin-read-only');
        expect(decision.message).toContain(tool);
        expect(decision.message).toContain(requester);
        expect(decision.message).toContain('demo');
      }),
      { numRuns: 300 },
    );
  });

  it('never gives a write tool to an anonymous requester, whatever the document', () => {
    fc.assert(
      fc.property(documentArb, fc.constantFrom('', 'mcp'), fc.constantFrom(...writeTools), (document, requester, tool) => {
        const decision = ask(compileDocument(document, 'r'), requester, tool);
        expect(decision.allow).toBe(false);
        expect(decision.source).toBe('builtin-read-only');
        expect(decision.requester.kind).toBe('anonymous');
      }),
    );
  });

  it('never grants a name that is not in the catalog', () => {
    fc.assert(
      fc.property(
        fc.string().filter((name) => !names.includes(name as never)),
        agentId,
        (name, requester) => {
          const policy = compileDocument({ version: 1, projectDefault: { allowedTools: [name, ...names] } }, 'r');
          const decision = ask(policy, requester, name);
          expect(decision.allow).toBe(false);
          expect(decision.reason).toBe('unknown_tool');
        },
      ),
    );
  });

  it('denies everything for an invalid document, and denies unknown projects', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), agentId, toolName, (bytes, requester, tool) => {
        const policy = compilePolicyFile(bytes);
        if (policy.status === 'ok') return; // random bytes that happen to be a valid document
        const decision = ask(policy, requester, tool);
        expect(decision).toMatchObject({ allow: false, reason: 'policy_invalid' });
      }),
    );
    expect(ask(undefined, 'QA', 'idea_ticket_read')).toMatchObject({ allow: false, reason: 'unknown_project', revision: 'none' });
    expect(compilePolicyFile(Buffer.from('{"version":2}'))).toMatchObject({ status: 'invalid' });
    expect(
      compilePolicyFile(
        Buffer.from(
          '{"version":1,"agents":[{"agentId":"A","policy":{"allowedTools":[]}},{"agentId":"A","policy":{"allowedTools":["idea_memory_write"]}}]}',
        ),
      ),
    ).toMatchObject({ status: 'invalid' });
  });

  it('gives unregistered ticket assistants read-only, and binds issue-scoped tools to the ephemeral ticket', () => {
    const policy = builtinPolicy();
    const requester = 'ticket-assistant:demo:82';
    expect(ask(policy, requester, 'idea_ticket_update_carnet')).toMatchObject({ allow: false, source: 'builtin-read-only' });
    expect(ask(policy, 'ticket-assistant:other:82', 'idea_ticket_read')).toMatchObject({
      allow: false,
      reason: 'requester_project_mismatch',
    });
    const grant: EphemeralGrant = ephemeralGrant(['idea_ticket_read', 'idea_ticket_update_carnet', 'idea_memory_read'], '82');
    const decideWith = (tool: string, args?: Record<string, unknown>) =>
      decide({ project: 'demo', requester, tool, arguments: args }, policy, lookup({ [requester]: grant }));
    expect(decideWith('idea_ticket_update_carnet', { issueRef: '#82' })).toMatchObject({ allow: true, source: 'ephemeral' });
    expect(decideWith('idea_ticket_update_carnet', { issueRef: '82' })).toMatchObject({ allow: true });
    expect(decideWith('idea_ticket_update_carnet', { issueRef: '#83' })).toMatchObject({ allow: false, reason: 'issue_out_of_bounds' });
    expect(decideWith('idea_ticket_update_carnet')).toMatchObject({ allow: false, reason: 'issue_out_of_bounds' });
    expect(decideWith('idea_memory_read')).toMatchObject({ allow: true }); // not issue-scoped
    expect(decideWith('idea_memory_write', { issueRef: '#82' })).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
  });

  it('denies a malformed requester every tool with invalid_requester, even where the default or an override grants it', () => {
    const everything = { allowedTools: names };
    const policy = compileDocument({ version: 1, projectDefault: everything, agents: [{ agentId: 'QA', policy: everything }] }, 'r');
    const malformed = [
      'Ticket-Assistant:demo:82',
      ' ticket-assistant:demo:82',
      'ticket-assistant::82',
      'ticket-assistant:demo:x',
      'QA:x',
      ' QA',
    ];
    for (const requester of malformed) {
      for (const tool of [...names, 'not_a_tool']) {
        const decision = ask(policy, requester, tool);
        expect(decision).toMatchObject({
          allow: false,
          reason: 'invalid_requester',
          source: 'none',
          requester: { id: requester, kind: 'invalid' },
        });
        expect(decision.message).toContain(tool);
        expect(decision.message).toContain(JSON.stringify(requester));
        expect(decision.message).toContain('demo');
      }
    }
    // The requester is checked before the file's state, and after the project's existence.
    expect(ask(compilePolicyFile(Buffer.from('{')), 'QA:x', 'idea_memory_read')).toMatchObject({ reason: 'invalid_requester' });
    expect(ask(undefined, 'QA:x', 'idea_memory_read')).toMatchObject({ reason: 'unknown_project' });
  });

  it('quotes at most 200 characters of a malformed requester in the message', () => {
    const requester = `:${'z'.repeat(400)}`;
    const { message } = ask(builtinPolicy(), requester, 'idea_memory_read');
    expect(message).toContain(`${JSON.stringify(requester.slice(0, 200))}…`);
    expect(message).not.toContain('z'.repeat(200));
  });

  it('does not let prototype keys resolve to an override', () => {
    const policy = compileDocument({ version: 1, agents: [{ agentId: 'A', policy: { allowedTools: writeTools } }] }, 'r');
    for (const requester of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(ask(policy, requester, 'idea_memory_write').allow).toBe(false);
    }
  });
});

describe('makeAllowlist (shared between equal lists)', () => {
  const catalogNames = TOOL_CATALOG.map((tool) => tool.name);
  const name = fc.oneof(fc.constantFrom(...catalogNames), fc.string(), fc.constantFrom('idea_memory_write\u0000x', 'x', '["', '\u0000'));

  it('grants exactly the catalog tools of each list, whatever lists were built before it', () => {
    fc.assert(
      fc.property(fc.array(fc.array(name, { maxLength: 6 }), { minLength: 1, maxLength: 20 }), (lists) => {
        for (const names of lists) {
          const allowlist = makeAllowlist('agent-override', names);
          const expected = catalogNames.filter((tool) => names.includes(tool));
          expect(allowlist.tools).toEqual(expected);
          expect([...allowlist.allowed].sort()).toEqual([...expected].sort());
          expect(allowlist.unknownTools).toEqual([...new Set(names.filter((n) => !(catalogNames as readonly string[]).includes(n)))]);
          expect(Object.isFrozen(allowlist)).toBe(true);
        }
      }),
    );
  });

  it('does not confuse lists whose names joined would look alike', () => {
    expect(makeAllowlist('agent-override', ['idea_memory_write', 'x']).allowed.has('idea_memory_write')).toBe(true);
    expect(makeAllowlist('agent-override', ['idea_memory_write\u0000x']).allowed.has('idea_memory_write')).toBe(false);
    expect(makeAllowlist('project-default', ['idea_memory_write']).source).toBe('project-default');
    expect(makeAllowlist('agent-override', ['idea_memory_write']).source).toBe('agent-override');
  });

  it('shares short lists, and builds long ones afresh every time (the memory it keeps is bounded)', () => {
    expect(makeAllowlist('agent-override', ['idea_memory_write'])).toBe(makeAllowlist('agent-override', ['idea_memory_write']));
    const long = ['idea_memory_write', ...Array.from({ length: 40 }, (_, i) => `not-a-tool-${'x'.repeat(60)}-${i}`)];
    const first = makeAllowlist('agent-override', long);
    const second = makeAllowlist('agent-override', long);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    expect(first.tools).toEqual(['idea_memory_write']);
    expect(first.unknownTools).toHaveLength(40);
  });
});
