/**
 * The proxy's log: one JSON object a line on stderr (pino's shape: `level`, `time`, `msg`), since
 * stdout carries the JSON-RPC stream and nothing else.
 */
import type { GuardLogger } from '../guards/common.js';

export interface ProxyLogger extends GuardLogger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

const LEVELS = { info: 30, warn: 40, error: 50 } as const;

export function stderrLogger(write: (line: string) => void = (line) => process.stderr.write(line)): ProxyLogger {
  const log = (level: keyof typeof LEVELS) => (fields: Record<string, unknown>, message: string) => {
    write(`${JSON.stringify({ level: LEVELS[level], time: Date.now(), name: 'idea-mcp-proxy', ...fields, msg: message })}\n`);
  };
  return { info: log('info'), warn: log('warn'), error: log('error') };
}
