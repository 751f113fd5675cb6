import { Project } from './dist/server/store/project.js';
import { readdirSync } from 'node:fs';
const root = process.argv[2];
const ids = readdirSync(root);
const t0 = performance.now();
for (const id of ids) Project.openSync(id, root + '/' + id);
console.log('cold sync load', Math.round(performance.now() - t0), 'ms');
