/** docs/api.md#resolving-a-decision: the requester grammar shared by the service and the client SDK. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeRequester, normalizeIssueRef, parseRequester } from '../../schemas/requester.js';

describe('parseRequester', () => {
  it('reads "" and "mcp" as anonymous, and nothing that merely looks like them', () => {
    expect(parseRequester('')).toEqual({ id: '', kind: 'anonymous' });
    expect(parseRequester('mcp')).toEqual({ id: 'mcp', kind: 'anonymous' });
    expect(parseRequester('MCP').kind).toBe('agent');
    expect(parseRequester(' mcp').kind).toBe('invalid');
  });

  it('reads a well-formed ticket assistant with its project and issue', () => {
    expect(parseRequester('ticket-assistant:demo:82')).toEqual({
      id: 'ticket-assistant:demo:82',
      kind: 'ticket-assistant',
      project: 'demo',
      issue: '82',
    });
    expect(parseRequester('ticket-assistant:a.b_c-1:#7')).toMatchObject({ kind: 'ticket-assistant', project: 'a.b_c-1', issue: '#7' });
  });

  it.each([
    'Ticket-Assistant:p:82',
    ' ticket-assistant:p:82',
    'ticket-assistant::82',
    'ticket-assistant:p:',
    'ticket-assistant:p',
    'ticket-assistant:',
    'ticket-assistant:p:82:x',
    'ticket-assistant:p:abc',
    'ticket-assistant:p:##82',
    'ticket-assistant:p: 82',
    'ticket-assistant:.p:82',
    'ticket-assistant:@:9',
    `ticket-assistant:p:${'1'.repeat(21)}`,
    'QA:x',
    'a/b',
    'a\\b',
    ' QA',
    '\tQA',
    'Q\u0000A',
    'QA\u007f',
    'x'.repeat(129),
    'QA ',
    'QA\u200b',
    '\uff31\uff21',
    'Q\u0410',
    'QA\ud800',
  ])('reads %j as invalid', (raw) => {
    expect(parseRequester(raw)).toEqual({ id: raw, kind: 'invalid' });
  });

  it('reads valid agent ids as agents, counting 128 in UTF-16 code units', () => {
    for (const id of ['QA', 'DevFrontend', 'ticket-assistant', 'Q A', 'x'.repeat(128), 'é'.repeat(128), '😀'.repeat(64)]) {
      expect(parseRequester(id)).toEqual({ id, kind: 'agent' });
    }
    expect(parseRequester('😀'.repeat(65)).kind).toBe('invalid');
  });

  it('never reads a string with a colon, slash, backslash or control character as an agent', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (raw) => {
        const { kind } = parseRequester(raw);
        // eslint-disable-next-line no-control-regex
        if (/[:/\\\u0000-\u001f\u007f]/.test(raw) || /^\s/.test(raw)) expect(kind).not.toBe('agent');
        if (kind === 'ticket-assistant') expect(raw).toMatch(/^ticket-assistant:[A-Za-z0-9][A-Za-z0-9._-]*:#?\d+$/);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('describeRequester', () => {
  it('names each kind, and quotes an invalid requester, JSON-escaped and cut at 200 characters', () => {
    expect(describeRequester(parseRequester('QA'))).toBe('agent QA');
    expect(describeRequester(parseRequester('mcp'))).toBe('anonymous requester "mcp"');
    expect(describeRequester(parseRequester(''))).toBe('anonymous requester ""');
    expect(describeRequester(parseRequester('ticket-assistant:demo:82'))).toBe('ticket assistant ticket-assistant:demo:82');
    expect(describeRequester(parseRequester('QA:x\n'))).toBe('invalid requester "QA:x\\n"');
    const long = `:${'y'.repeat(300)}`;
    expect(describeRequester(parseRequester(long))).toBe(`invalid requester ${JSON.stringify(long.slice(0, 200))}…`);
  });
});

describe('normalizeIssueRef', () => {
  it('compares tickets with the # stripped', () => {
    expect(normalizeIssueRef('#82')).toBe('82');
    expect(normalizeIssueRef(' 82 ')).toBe('82');
  });
});
