import Fastify from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiPlugin } from '../../server/http/ui-plugin.js';
import { buildUi } from '../../ui/build.js';

let outDir: string;

beforeAll(async () => {
  outDir = await mkdtemp(path.join(os.tmpdir(), 'pdp-ui-'));
  await buildUi(outDir);
});

afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('uiPlugin', () => {
  it('serves the built page at /ui and /ui/, and its assets, with a strict CSP', async () => {
    const app = Fastify();
    await app.register(uiPlugin, { root: outDir });
    for (const url of ['/ui', '/ui/']) {
      const page = await app.inject(url);
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.body).toContain('<main id="app"');
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    }
    const script = await app.inject('/ui/app.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('javascript');
    expect((await app.inject('/ui/styles.css')).headers['content-type']).toContain('text/css');
    await app.close();
  });

  it('never serves a file outside the assets folder', async () => {
    const app = Fastify();
    await app.register(uiPlugin, { root: outDir });
    for (const url of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/..%2fpackage.json', '/ui/missing.js']) {
      const response = await app.inject(url);
      expect(response.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(response.body).not.toContain('"devDependencies"');
    }
    await app.close();
  });

  it('answers 503 ui_not_built until the assets exist, then serves them without a restart', async () => {
    const lateDir = path.join(outDir, 'late');
    const app = Fastify();
    await app.register(uiPlugin, { root: lateDir });
    for (const url of ['/ui', '/ui/', '/ui/app.js']) {
      const response = await app.inject(url);
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ error: { code: 'ui_not_built' } });
      expect(response.json<{ error: { message: string } }>().error.message).toContain('npm run build:ui');
    }
    await buildUi(lateDir);
    expect((await app.inject('/ui/')).statusCode).toBe(200);
    expect((await app.inject('/ui/app.js')).statusCode).toBe(200);
    await app.close();
  });
});
