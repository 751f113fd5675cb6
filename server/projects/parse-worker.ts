/** The worker thread of parse.ts: compiles the big files away from the thread that answers decisions. */
import { parentPort } from 'node:worker_threads';
import { catalogFromSnapshot } from '../domain/project-catalog.js';
import { checkProposal } from './proposal-check.js';
import { compileChecked, parseAgentsChecked } from './parse-checks.js';
import type { ParseRequest, ParseResponse } from './parse-protocol.js';

const port = parentPort;
if (!port) throw new Error('parse-worker must run as a worker thread');

port.on('message', ({ id, kind, bytes, catalog }: ParseRequest) => {
  let response: ParseResponse;
  if (kind === 'agents') response = { id, agents: parseAgentsChecked(bytes) };
  else if (kind === 'proposal') response = { id, proposal: checkProposal(bytes, catalogFromSnapshot(catalog ?? { kind: 'idea' })) };
  else {
    const policy = compileChecked(bytes);
    response = { id, policy: policy.status === 'ok' ? 'valid' : policy };
  }
  port.postMessage(response);
});
