import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditRecordOf, createAuditFile, type AuditFile, type AuditRecord } from '../../server/decisions/audit-file.js';
import type { Decision } from '../../schemas/index.js';
import { ADMIN_TOKEN, DECIDE_TOKEN, buildTestApp } from '../support/app.js';
import { tempFolder } from '../support/temp-folder.js';

const FIELDS = [
  'at',
  'decisionId',
  'project',
  'requester',
  'requesterKind',
  'tool',
  'access',
  'allow',
  'reason',
  'source',
  'revision',
].sort();

function record(index: number): AuditRecord {
  return {
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
    decisionId: `d-${String(index).padStart(5, '0')}`,
    project: 'demo',
    requester: 'DevFrontend',
    requesterKind: 'agent',
    tool: 'idea_memory_write',
    access: 'write',
    allow: false,
    reason: 'not_in_allowlist',
    source: 'project-default',
    revision: '3f2a9c1b0d4e5f60',
  };
}

async function readLines(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const opened: AuditFile[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((audit) => audit.close()));
});

describe('createAuditFile', () => {
  it('appends one JSON object per decision with exactly the audit fields', async () => {
    const folder = await tempFolder();
    const path = join(folder, 'nested', 'audit.ndjson');
    const errors: Error[] = [];
    const audit = createAuditFile(path, { onError: (error) => errors.push(error) });
    opened.push(audit);
    for (let index = 0; index < 3; index++) audit.write(record(index));
    await audit.close();

    const lines = await readLines(path);
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => line.decisionId)).toEqual(['d-00000', 'd-00001', 'd-00002']);
    for (const line of lines) expect(Object.keys(line).sort()).toEqual(FIELDS);
    expect(lines[0]).toEqual(record(0));
    expect(errors).toEqual([]);
    expect(audit.stats()).toEqual({ written: 3, dropped: 0, rotations: 0 });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('never writes fields outside the record, such as a token the caller passed by mistake', async () => {
    const folder = await tempFolder();
    const path = join(folder, 'audit.ndjson');
    const audit = createAuditFile(path);
    opened.push(audit);
    const leaky = { ...record(1), authorization: 'Bearer s3cret-admin-token', token: 's3cret-admin-token' };
    audit.write(leaky);
    await audit.close();
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('s3cret');
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual(FIELDS);
  });

  it('cuts every free-text field longer than 256 characters and names the fields it cut', async () => {
    const folder = await tempFolder();
    const path = join(folder, 'audit.ndjson');
    const audit = createAuditFile(path);
    opened.push(audit);
    const long = (prefix: string): string => `${prefix}${'x'.repeat(1000)}`;
    audit.write({ ...record(1), decisionId: long('d'), project: long('p'), requester: long('r'), tool: long('t'), revision: long('v') });
    audit.write(record(2));
    await audit.close();
    const [cut, whole] = await readLines(path);
    expect(cut).toMatchObject({
      decisionId: `${long('d').slice(0, 255)}…`,
      project: `${long('p').slice(0, 255)}…`,
      requester: `${long('r').slice(0, 255)}…`,
      tool: `${long('t').slice(0, 255)}…`,
      revision: `${long('v').slice(0, 255)}…`,
      truncated: ['decisionId', 'project', 'requester', 'tool', 'revision'],
    });
    expect(whole).toEqual(record(2));
  });

  it('builds the record of a decision from the wire decision', () => {
    const decision: Decision = {
      allow: true,
      reason: 'allowed',
      message: 'Tool idea_ticket_read is allowed for agent QA in project demo.',
      source: 'builtin-read-only',
      requester: { id: 'QA', kind: 'agent' },
      tool: { name: 'idea_ticket_read', access: 'read' },
      project: 'demo',
      revision: 'builtin',
      decisionId: 'abc',
    };
    expect(auditRecordOf(decision, 'QA', new Date('2026-01-01T00:00:00.000Z'))).toEqual({
      at: '2026-01-01T00:00:00.000Z',
      decisionId: 'abc',
      project: 'demo',
      requester: 'QA',
      requesterKind: 'agent',
      tool: 'idea_ticket_read',
      access: 'read',
      allow: true,
      reason: 'allowed',
      source: 'builtin-read-only',
      revision: 'builtin',
    });
  });

  it('rotates by size, keeps maxFiles old files, and loses no line in the kept window', async () => {
    const folder = await tempFolder();
    const path = join(folder, 'audit.ndjson');
    const lineBytes = Buffer.byteLength(`${JSON.stringify(record(0))}\n`);
    const maxBytes = lineBytes * 4 + 10; // 4 lines per file
    const audit = createAuditFile(path, { maxBytes, maxFiles: 3 });
    opened.push(audit);
    // A synchronous burst (rotation happens while records keep coming), then a trickle.
    for (let index = 0; index < 30; index++) audit.write(record(index));
    for (let index = 30; index < 40; index++) {
      audit.write(record(index));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await audit.close();

    const names = (await readdir(folder)).sort();
    expect(names).toEqual(['audit.ndjson', 'audit.ndjson.1', 'audit.ndjson.2', 'audit.ndjson.3']);
    const ids: unknown[] = [];
    for (const name of ['audit.ndjson.3', 'audit.ndjson.2', 'audit.ndjson.1', 'audit.ndjson']) {
      const file = join(folder, name);
      expect((await stat(file)).size).toBeLessThanOrEqual(maxBytes);
      ids.push(...(await readLines(file)).map((line) => line.decisionId));
    }
    // The kept files are the newest records, in order, without a gap, ending with the last one.
    expect(ids.length).toBeGreaterThanOrEqual(13);
    const expected = Array.from({ length: ids.length }, (_, offset) => record(40 - ids.length + offset).decisionId);
    expect(ids).toEqual(expected);
    const stats = audit.stats();
    expect(stats.written).toBe(40);
    expect(stats.dropped).toBe(0);
    expect(stats.rotations).toBeGreaterThanOrEqual(9);
  });

  it('continues an existing file after a restart and rotates it when full', async () => {
    const folder = await tempFolder();
    const path = join(folder, 'audit.ndjson');
    const previous = `${JSON.stringify(record(0))}\n`;
    await writeFile(path, previous);
    const audit = createAuditFile(path, { maxBytes: Buffer.byteLength(previous) * 2 });
    opened.push(audit);
    audit.write(record(1));
    audit.write(record(2));
    await audit.close();
    expect((await readLines(`${path}.1`)).map((line) => line.decisionId)).toEqual(['d-00000', 'd-00001']);
    expect((await readLines(path)).map((line) => line.decisionId)).toEqual(['d-00002']);
  });

  it('reports I/O errors to onError and never throws into the caller', async () => {
    const folder = await tempFolder();
    const notAFolder = join(folder, 'plain-file');
    await writeFile(notAFolder, 'x');
    const errors: Error[] = [];
    const audit = createAuditFile(join(notAFolder, 'audit.ndjson'), { onError: (error) => errors.push(error) });
    opened.push(audit);
    expect(() => {
      audit.write(record(1));
    }).not.toThrow();
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(audit.stats()).toMatchObject({ written: 0, dropped: 1 });
    await expect(audit.close()).resolves.toBeUndefined();
  });

  it('survives a throwing error handler', async () => {
    const folder = await tempFolder();
    const notAFolder = join(folder, 'plain-file');
    await writeFile(notAFolder, 'x');
    const audit = createAuditFile(join(notAFolder, 'audit.ndjson'), {
      onError: () => {
        throw new Error('handler bug');
      },
    });
    opened.push(audit);
    expect(() => {
      audit.write(record(1));
    }).not.toThrow();
  });

  it('drops records written after close', async () => {
    const folder = await tempFolder();
    const path = join(folder, 'audit.ndjson');
    const audit = createAuditFile(path);
    audit.write(record(1));
    await audit.close();
    audit.write(record(2));
    expect(audit.stats()).toMatchObject({ written: 1, dropped: 1 });
    expect(await readLines(path)).toHaveLength(1);
  });

  it('refuses nonsensical options', () => {
    expect(() => createAuditFile('/tmp/never-created.ndjson', { maxBytes: 0 })).toThrow(RangeError);
    expect(() => createAuditFile('/tmp/never-created.ndjson', { maxFiles: 0 })).toThrow(RangeError);
  });
});

describe('audit file wired into the app (PDP_AUDIT_FILE)', () => {
  it('appends every decision the API answers, without the tokens', async (t) => {
    const path = join(await tempFolder(), 'audit', 'decisions.ndjson');
    const { app, close } = await buildTestApp(t, { demo: {} }, { decideToken: DECIDE_TOKEN, auditFile: path });
    const headers = { authorization: `Bearer ${DECIDE_TOKEN}` };
    const denied = await app.inject({
      method: 'POST',
      url: '/decide',
      headers,
      payload: { project: 'demo', requester: 'QA', tool: 'idea_memory_write' },
    });
    const batch = await app.inject({
      method: 'POST',
      url: '/decide/batch',
      headers,
      payload: { queries: [{ project: 'demo', requester: 'mcp', tool: 'idea_ticket_read' }] },
    });
    expect(denied.statusCode).toBe(200);
    expect(batch.statusCode).toBe(200);
    const ids = [denied.json<Decision>().decisionId, batch.json<{ decisions: Decision[] }>().decisions[0]?.decisionId];
    await close();

    const lines = await readLines(path);
    expect(lines.map((line) => line.decisionId)).toEqual(ids);
    expect(lines[0]).toMatchObject({
      project: 'demo',
      requester: 'QA',
      tool: 'idea_memory_write',
      allow: false,
      reason: 'not_in_allowlist',
    });
    expect(lines[1]).toMatchObject({ requester: 'mcp', requesterKind: 'anonymous', allow: true, reason: 'allowed' });
    const written = await readFile(path, 'utf8');
    expect(written).not.toContain(DECIDE_TOKEN);
    expect(written).not.toContain(ADMIN_TOKEN);
  });

  it('writes no line for an unknown project, and cuts every long field at 256 characters, naming it in truncated', async (t) => {
    const path = join(await tempFolder(), 'decisions.ndjson');
    const { app, close } = await buildTestApp(t, { demo: {} }, { auditFile: path });
    const decide = async (query: object): Promise<Decision> => {
      const response = await app.inject({ method: 'POST', url: '/decide', payload: query });
      expect(response.statusCode).toBe(200);
      return response.json<Decision>();
    };
    const forged = await decide({ project: `x${'p'.repeat(255)}`, requester: 'QA', tool: 'idea_memory_write' });
    expect(forged.reason).toBe('unknown_project');
    const longRequester = `QA${'q'.repeat(400)}`;
    const longTool = `idea_${'t'.repeat(251)}`; // the schema's longest tool name: kept whole
    const long = await decide({ project: 'demo', requester: longRequester, tool: longTool });
    const short = await decide({ project: 'demo', requester: 'QA', tool: 'idea_ticket_read' });
    await close();

    const lines = await readLines(path);
    expect(lines.map((line) => line.decisionId)).toEqual([long.decisionId, short.decisionId]);
    expect(lines[0]).toMatchObject({
      project: 'demo',
      requester: `${longRequester.slice(0, 255)}…`,
      tool: longTool,
      truncated: ['requester'],
    });
    expect(lines[1]).toMatchObject({ requester: 'QA', tool: 'idea_ticket_read', allow: true });
    expect(lines[1]).not.toHaveProperty('truncated');
    for (const line of lines)
      for (const value of Object.values(line)) if (typeof value === 'string') expect(value.length).toBeLessThanOrEqual(256);
  });
});
