import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseProjectsList } from '../../server/config.js';

describe('configuration from the environment', () => {
  it('refuses a decide token equal to the admin token', async () => {
    await expect(loadConfig({ PDP_ADMIN_TOKEN: 'same-secret', PDP_DECIDE_TOKEN: 'same-secret' })).rejects.toBeInstanceOf(ConfigError);
  });

  it('refuses a non-loopback host without a decide token, and accepts it with one', async () => {
    await expect(loadConfig({ PDP_HOST: '0.0.0.0', PDP_ADMIN_TOKEN: 'admin' })).rejects.toThrow(/PDP_DECIDE_TOKEN/);
    await expect(loadConfig({ PDP_HOST: '0.0.0.0', PDP_ADMIN_TOKEN: 'admin', PDP_DECIDE_TOKEN: 'decide' })).resolves.toMatchObject({
      host: '0.0.0.0',
    });
  });

  it('parses PDP_PROJECTS and refuses bad ids, relative paths and duplicates', () => {
    expect(parseProjectsList('a=/x, b.c=/y/z')).toEqual({ a: '/x', 'b.c': '/y/z' });
    expect(() => parseProjectsList('../a=/x')).toThrow(ConfigError);
    expect(() => parseProjectsList('a=relative')).toThrow(ConfigError);
    expect(() => parseProjectsList('a=/x,a=/y')).toThrow(ConfigError);
    // Two ids for one folder: two write queues on one policy file.
    expect(() => parseProjectsList('a=/x,b=/x/')).toThrow(/projects a and b name the same folder/);
    expect(() => parseProjectsList('__proto__=/x')).toThrow(ConfigError);
  });
});
