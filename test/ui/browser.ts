/**
 * Launches Debian's chromium (`apt-get install -y chromium`) through playwright-core for the UI
 * tests and the screenshot script. No browser is downloaded.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether the browser tests can run. In CI a missing chromium is a failure, never a skip: the
 * suite calls {@link launchChromium}, which throws.
 */
export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH) || process.env.CI !== undefined;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: install it with \`apt-get install -y chromium\` (required when CI is set).`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
