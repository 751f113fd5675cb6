/**
 * A policy file with more than one name (hard link) is refused (docs/design.md#links): an editor
 * saving through the other name replaces that name only, and no watch of the project hears it.
 * Content refused so stays refused until the file itself is rewritten or replaced, even once its
 * other name is gone: the link count dropping back to 1 never brings it into force by itself.
 */
import { builtinPolicy, invalidPolicy, revisionOf, type CompiledPolicy } from '../domain/compile.js';
import { invalidServers, type CompiledServers } from '../domain/servers-file.js';
import { inodeOf, type FileRead } from './file-read.js';

/** Start of the message of a policy refused for its hard links (`policy_invalid`). */
export const HARD_LINKED = 'the policy file has another name (a hard link)';

const FIX =
  'give the file a name of its own (e.g. `cp .ideai/mcp-tool-permissions.json new.json && mv new.json .ideai/mcp-tool-permissions.json`), or replace the whole document to repair it';

/** The policy of a file with `links` names: refused, its revision following its content. */
export function hardLinkedPolicy(bytes: Buffer, links: number): CompiledPolicy {
  return invalidPolicy(revisionOf(`hard-linked:${revisionOf(bytes)}`), {
    message: `${HARD_LINKED}: it has ${String(links)} names, and a save through another name would not be seen; ${FIX}`,
  });
}

/** Start of the message of a servers file refused for its hard links (`policy_invalid`). */
export const SERVERS_HARD_LINKED = 'the servers file has another name (a hard link)';

const SERVERS_FIX = 'give the file a name of its own (e.g. `cp .ideai/mcp-servers.json new.json && mv new.json .ideai/mcp-servers.json`)';

/** The servers file with `links` names: refused like a hard-linked policy file, its revision following its content. */
export function hardLinkedServers(bytes: Buffer, links: number): CompiledServers {
  return invalidServers(revisionOf(`hard-linked:${revisionOf(bytes)}`), {
    message: `${SERVERS_HARD_LINKED}: it has ${String(links)} names, and a save through another name would not be seen; ${SERVERS_FIX}`,
  });
}

/** {@link HardLinkMemory} for the servers file: the content refused for its links stays refused until rewritten. */
export class ServersHardLinkMemory {
  private readonly memory = new HardLinkMemory();

  get refusing(): boolean {
    return this.memory.refusing;
  }

  judge(read: FileRead, servers: CompiledServers): CompiledServers {
    const judged = this.memory.judge(read, builtinPolicy());
    if (judged.status === 'ok' || !read.ok) return servers;
    return invalidServers(judged.revision, {
      message: `${SERVERS_HARD_LINKED} when it was read, and it has not been rewritten or replaced since: the content refused then does not come into force by itself; ${SERVERS_FIX}`,
    });
  }
}

/** What a project refused: the file and the revision of its bytes then. */
interface Refused {
  readonly inode: string;
  readonly revision: string;
}

/** Remembers, for one project, the content it refused for its hard links (see the module's comment). */
export class HardLinkMemory {
  private refused: Refused | undefined;

  /** Whether some content is refused now (a project that leaves keeps this memory only then). */
  get refusing(): boolean {
    return this.refused !== undefined;
  }

  /** The policy to serve for `read` compiled as `policy`: refused while it is, or still is, the refused file and content. */
  judge(read: FileRead, policy: CompiledPolicy): CompiledPolicy {
    // Absent or unreadable: the refused file may come back to the path (renamed away and back).
    if (!read.ok || (read.links === 1 && this.refused === undefined)) return policy;
    const revision = revisionOf(read.bytes);
    const inode = inodeOf(read.identity);
    if (read.links > 1) {
      this.refused = { inode, revision };
      return policy;
    }
    if (this.refused?.inode === inode && this.refused.revision === revision) {
      return invalidPolicy(revisionOf(`hard-linked:${revision}`), {
        message: `${HARD_LINKED} when it was read, and it has not been rewritten or replaced since: the content refused then does not come into force by itself; ${FIX}`,
      });
    }
    this.refused = undefined;
    return policy;
  }
}
