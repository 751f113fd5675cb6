/**
 * `writeFileAtomic` on its own, on real files (docs/design.md#writes-a-compare-and-swap-on-the-file):
 * the new bytes whole or the old ones, the mode kept, links handled as the module says, its temp and
 * aside names, and the compare-and-swap. write-conflict.test.ts and interrupted-writes.test.ts
 * check the same writes through the service.
 */
import { lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { chmod, link, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  SERVICE_TEMP_FILE,
  TargetChangedError,
  WriteOutcomeUnknownError,
  isAsideInFlight,
  writeFileAtomic,
} from '../../server/projects/atomic-write.js';
import { tempFolder } from '../support/temp-folder.js';

const NAME = 'mcp-tool-permissions.json';

/** A folder holding `NAME` with `text` (no file when undefined), and the file's path. */
async function folderWith(text: string | undefined): Promise<{ folder: string; target: string }> {
  const folder = await tempFolder();
  const target = path.join(folder, NAME);
  if (text !== undefined) await writeFile(target, text);
  return { folder, target };
}

const inodeOf = (file: string): number => lstatSync(file).ino;
const modeOf = async (file: string): Promise<number> => (await stat(file)).mode & 0o7777;
/** The entries of `folder` named as this service's temp or aside files. */
const serviceNames = (folder: string): string[] => readdirSync(folder).filter((name) => SERVICE_TEMP_FILE.test(name));

describe('writeFileAtomic: the new file whole, or nothing', () => {
  it('puts a new file in place of the old one and returns its identity; another name of the old file keeps the old bytes', async () => {
    const { folder, target } = await folderWith('old\n');
    await link(target, path.join(folder, 'other-name'));
    const written = await writeFileAtomic(target, 'new\n');
    expect(await readFile(target, 'utf8')).toBe('new\n');
    const now = await stat(target, { bigint: true });
    expect(written).toEqual({ dev: now.dev, ino: now.ino });
    expect(await readFile(path.join(folder, 'other-name'), 'utf8')).toBe('old\n');
    expect(readdirSync(folder).sort()).toEqual([NAME, 'other-name']);
  });

  it('has the new file whole, with its mode, under a temp name before the rename; the old one kept aside for an undo', async () => {
    const { folder, target } = await folderWith('old\n');
    await chmod(target, 0o640);
    const oldInode = inodeOf(target);
    const seen: { name: string; kind: string; text: string; mode: number; isOld: boolean }[] = [];
    await writeFileAtomic(target, 'new and complete\n', {
      replaceOnlyIf: (realTarget) => {
        expect(realTarget).toBe(target);
        expect(readFileSync(target, 'utf8')).toBe('old\n');
        for (const name of serviceNames(folder)) {
          const file = path.join(folder, name);
          const [, of = '', kind = ''] = SERVICE_TEMP_FILE.exec(name) ?? [];
          expect(name).toContain(`.${process.pid}.`);
          expect(of).toBe(NAME);
          seen.push({
            name,
            kind,
            text: readFileSync(file, 'utf8'),
            mode: statSync(file).mode & 0o7777,
            isOld: inodeOf(file) === oldInode,
          });
        }
        return true;
      },
    });
    expect(seen.map(({ kind, text, mode, isOld }) => ({ kind, text, mode, isOld })).sort((a, b) => a.text.localeCompare(b.text))).toEqual([
      { kind: 'tmp', text: 'new and complete\n', mode: 0o640, isOld: false },
      { kind: 'tmp', text: 'old\n', mode: 0o640, isOld: true },
    ]);
    expect(readdirSync(folder)).toEqual([NAME]);
  });

  it('refused by replaceOnlyIf: TargetChangedError, the old file untouched, no temp file left', async () => {
    const { folder, target } = await folderWith('old\n');
    const before = inodeOf(target);
    const refusal = writeFileAtomic(target, 'new\n', { replaceOnlyIf: () => false });
    await expect(refusal).rejects.toBeInstanceOf(TargetChangedError);
    await expect(refusal).rejects.toMatchObject({ name: 'TargetChangedError', target });
    expect(await readFile(target, 'utf8')).toBe('old\n');
    expect(inodeOf(target)).toBe(before);
    expect(readdirSync(folder)).toEqual([NAME]);
  });

  it('fails on a folder in place of the file, leaving that folder and no temp file', async () => {
    const { folder, target } = await folderWith(undefined);
    await mkdir(target);
    await writeFile(path.join(target, 'inside'), 'kept\n');
    await expect(writeFileAtomic(target, 'new\n')).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/) as string,
    });
    expect((await lstat(target)).isDirectory()).toBe(true);
    expect(await readFile(path.join(target, 'inside'), 'utf8')).toBe('kept\n');
    expect(readdirSync(folder)).toEqual([NAME]);
  });

  it('creates one missing folder level (.ideai) and removes it again when the write is refused; two missing levels fail', async () => {
    const root = await tempFolder();
    const ideai = path.join(root, '.ideai');
    await writeFileAtomic(path.join(ideai, NAME), 'first\n');
    expect(await readFile(path.join(ideai, NAME), 'utf8')).toBe('first\n');

    const other = path.join(root, 'other');
    await expect(writeFileAtomic(path.join(other, NAME), 'x', { replaceOnlyIf: () => false })).rejects.toBeInstanceOf(TargetChangedError);
    await expect(lstat(other)).rejects.toMatchObject({ code: 'ENOENT' });

    await expect(writeFileAtomic(path.join(root, 'a', 'b', NAME), 'x')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readdirSync(root)).toEqual(['.ideai']);
  });

  it('of 10 writes at once, each resolves and the file ends as one of them whole', async () => {
    const { folder, target } = await folderWith('old\n');
    const texts = Array.from({ length: 10 }, (_, i) => `${String(i).repeat(200_000)}\n`);
    await Promise.all(texts.map((text) => writeFileAtomic(target, text)));
    expect(texts).toContain(await readFile(target, 'utf8'));
    expect(readdirSync(folder)).toEqual([NAME]);
  });
});

describe('writeFileAtomic: modes', () => {
  it("keeps an existing file's mode, adding only owner read and write", async () => {
    for (const [before, after] of [
      [0o640, 0o640],
      [0o444, 0o644],
      [0o000, 0o600],
      [0o2755, 0o2755],
    ] as const) {
      const { target } = await folderWith('old\n');
      await chmod(target, before);
      await writeFileAtomic(target, 'new\n', { defaultMode: 0o666 });
      expect([before.toString(8), (await modeOf(target)).toString(8)]).toEqual([before.toString(8), after.toString(8)]);
    }
  });

  it('gives a new file defaultMode whatever the umask, else 0644', async () => {
    const { folder, target } = await folderWith(undefined);
    await writeFileAtomic(target, 'new\n', { defaultMode: 0o666 });
    expect((await modeOf(target)).toString(8)).toBe('666');
    await writeFileAtomic(path.join(folder, 'plain.json'), 'new\n');
    expect((await modeOf(path.join(folder, 'plain.json'))).toString(8)).toBe('644');
  });
});

describe('writeFileAtomic: links', () => {
  it('writes through a symlink to a regular file and keeps the link', async () => {
    const { folder, target } = await folderWith(undefined);
    const real = path.join(folder, 'real.json');
    await writeFile(real, 'old\n');
    await symlink('real.json', target);
    await writeFileAtomic(target, 'new\n');
    expect(await readlink(target)).toBe('real.json');
    expect(await readFile(real, 'utf8')).toBe('new\n');
  });

  it('replaces a symlink to a folder, to a device or to nothing itself, never what it points at', async () => {
    for (const pointsAt of ['a-folder', '/dev/null', 'nothing-there']) {
      const { folder, target } = await folderWith(undefined);
      await mkdir(path.join(folder, 'a-folder'));
      await symlink(pointsAt, target);
      await writeFileAtomic(target, 'new\n');
      const stats = await lstat(target);
      expect([pointsAt, stats.isFile()]).toEqual([pointsAt, true]);
      expect(await readFile(target, 'utf8')).toBe('new\n');
      expect((await lstat(path.join(folder, 'a-folder'))).isDirectory()).toBe(true);
    }
    expect((await lstat('/dev/null')).isCharacterDevice()).toBe(true);
  });

  it('with expect, replaces even a symlink to a regular file itself, leaving that file', async () => {
    const { folder, target } = await folderWith(undefined);
    const real = path.join(folder, 'real.json');
    await writeFile(real, 'old\n');
    await symlink('real.json', target);
    await writeFileAtomic(target, 'new\n', { expect: () => true });
    expect((await lstat(target)).isFile()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe('new\n');
    expect(await readFile(real, 'utf8')).toBe('old\n');
  });
});

describe('writeFileAtomic with expect: a compare-and-swap', () => {
  it('moves the old file aside under an aside name in flight, and links the new one into the then empty name', async () => {
    const { folder, target } = await folderWith('old\n');
    const oldInode = inodeOf(target);
    let asideSeen = '';
    await writeFileAtomic(target, 'new\n', {
      expect: (movedAside) => {
        asideSeen = movedAside ?? '';
        expect(path.dirname(asideSeen)).toBe(folder);
        expect(SERVICE_TEMP_FILE.exec(path.basename(asideSeen))?.slice(1)).toEqual([NAME, 'aside']);
        expect(isAsideInFlight(asideSeen)).toBe(true);
        expect(inodeOf(asideSeen)).toBe(oldInode);
        expect(() => lstatSync(target)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
        return true;
      },
    });
    expect(await readFile(target, 'utf8')).toBe('new\n');
    expect(isAsideInFlight(asideSeen)).toBe(false);
    expect(readdirSync(folder)).toEqual([NAME]);
  });

  it('is told undefined when there was no file', async () => {
    const { target } = await folderWith(undefined);
    const told: (string | undefined)[] = [];
    await writeFileAtomic(target, 'new\n', { expect: (aside) => (told.push(aside), true) });
    expect(told).toEqual([undefined]);
    expect(await readFile(target, 'utf8')).toBe('new\n');
  });

  it('answered false: TargetChangedError, the same old file put back, nothing left aside', async () => {
    const { folder, target } = await folderWith('old\n');
    const before = inodeOf(target);
    let aside = '';
    await expect(writeFileAtomic(target, 'new\n', { expect: (moved) => ((aside = moved ?? ''), false) })).rejects.toBeInstanceOf(
      TargetChangedError,
    );
    expect(inodeOf(target)).toBe(before);
    expect(await readFile(target, 'utf8')).toBe('old\n');
    expect(isAsideInFlight(aside)).toBe(false);
    expect(readdirSync(folder)).toEqual([NAME]);
  });

  it('refused when a save takes the empty name first: that save stays', async () => {
    const { folder, target } = await folderWith('old\n');
    await expect(
      writeFileAtomic(target, 'ours\n', {
        expect: () => {
          writeFileSync(target, 'an editor’s save\n');
          return true;
        },
      }),
    ).rejects.toBeInstanceOf(TargetChangedError);
    expect(await readFile(target, 'utf8')).toBe('an editor’s save\n');
    expect(readdirSync(folder)).toEqual([NAME]);
  });

  it('of two writers that read the same file, one wins and the other is refused', async () => {
    const { folder, target } = await folderWith('old\n');
    const read = inodeOf(target);
    const sameAsRead = (aside: string | undefined) => aside !== undefined && inodeOf(aside) === read;
    const outcomes = await Promise.allSettled(['A\n', 'B\n'].map((text) => writeFileAtomic(target, text, { expect: sameAsRead })));
    const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [['A\n', 'B\n'][i]] : []));
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected' && outcome.reason instanceof TargetChangedError);
    expect([won.length, refused.length]).toEqual([1, 1]);
    expect(await readFile(target, 'utf8')).toBe(won[0]);
    expect(readdirSync(folder)).toEqual([NAME]);
  });

  it('refused by replaceOnlyIf before anything is moved aside', async () => {
    const { target } = await folderWith('old\n');
    let asked = false;
    const refusal = writeFileAtomic(target, 'new\n', { replaceOnlyIf: () => false, expect: () => (asked = true) });
    await expect(refusal).rejects.toBeInstanceOf(TargetChangedError);
    expect(asked).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('old\n');
  });
});

describe('the names and errors the module exports', () => {
  it('SERVICE_TEMP_FILE names `.<name>.<pid>.<12 hex>.(tmp|aside)` and nothing else', () => {
    expect(SERVICE_TEMP_FILE.exec('.mcp-tool-permissions.json.4242.0123456789ab.tmp')?.slice(1)).toEqual([
      'mcp-tool-permissions.json',
      'tmp',
    ]);
    expect(SERVICE_TEMP_FILE.exec('.agents.json.1.abcdefabcdef.aside')?.slice(1)).toEqual(['agents.json', 'aside']);
    for (const other of [
      'mcp-tool-permissions.json.4242.0123456789ab.tmp',
      '.mcp-tool-permissions.json.4242.0123456789AB.tmp',
      '.mcp-tool-permissions.json.4242.0123456789a.tmp',
      '.mcp-tool-permissions.json.pid.0123456789ab.tmp',
      '.mcp-tool-permissions.json.4242.0123456789ab.swp',
      '.editor-4242-0.tmp',
    ]) {
      expect([other, SERVICE_TEMP_FILE.test(other)]).toEqual([other, false]);
    }
  });

  it('WriteOutcomeUnknownError carries the failure and says the file must be read again', () => {
    const failure = Object.assign(new Error('fsync: EIO'), { code: 'EIO' });
    const error = new WriteOutcomeUnknownError(failure);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('WriteOutcomeUnknownError');
    expect(error.failure).toBe(failure);
    expect(error.message).toContain('fsync: EIO');
  });
});
