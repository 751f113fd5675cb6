/**
 * The commands that run offline (`check`, `test`, `decide`, `preview`, `fmt`), in one module: the build
 * bundles it into one file (scripts/build-cli.ts), which Node loads in a fraction of the time the
 * ~220 files of TypeBox and the service's modules take one by one.
 */
export { checkCommand } from './check-command.js';
export { decideCommand } from './decide-command.js';
export { fmtCommand } from './fmt-command.js';
export { previewCommand } from './preview-command.js';
export { testCommand } from './test-command.js';
