/**
 * A policy file named on the command line as a reviewer names it: a path, `-` for stdin, or any
 * readable file such as a pipe or `<(git show main:…)` (a /dev/fd/N), read up to the policy file's
 * 4 MiB limit so a runaway pipe cannot fill memory.
 */
import { createReadStream, promises as fs } from 'node:fs';
import type { Readable } from 'node:stream';
import { MAX_FILE_BYTES } from '../projects/file-read.js';
import { UsageError } from './usage.js';

const LIMIT_MIB = MAX_FILE_BYTES / 1024 / 1024;

/** The stream's bytes, or a usage error as soon as it passes the limit. */
async function boundedBytes(stream: Readable, name: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += bytes.length;
    if (size > MAX_FILE_BYTES) {
      stream.destroy();
      throw new UsageError(`${name}: larger than ${LIMIT_MIB} MiB`);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

export async function readPolicyInput(name: string, stdin: Readable): Promise<Buffer> {
  if (name === '-') return boundedBytes(stdin, 'stdin');
  const stats = await fs.stat(name).catch(() => undefined);
  if (stats === undefined) throw new UsageError(`cannot read ${name}: no such file`);
  if (stats.isDirectory()) throw new UsageError(`${name} is a folder, not a policy file`);
  // A regular file's size is known before reading; a pipe's is found while reading it.
  if (stats.isFile() && stats.size > MAX_FILE_BYTES) throw new UsageError(`${name}: larger than ${LIMIT_MIB} MiB`);
  try {
    return await boundedBytes(createReadStream(name), name);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${name}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
