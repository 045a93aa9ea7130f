import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/**
 * A real headless Chromium (Debian's `chromium` package) driven by playwright-core, with a
 * fresh user-data directory per launch. Missing Chromium is an error, never a skip.
 */
export const CHROMIUM_PATH = process.env.MEMGATE_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of the browser tests: kept by CI as artefacts (gitignored). */
export const SCREENSHOT_DIR = join(process.cwd(), '.ci/artifacts/explorer');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(executablePath = CHROMIUM_PATH): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium not found at ${executablePath}: the explorer tests drive a real headless Chromium. ` +
        'Install it with `apt-get install -y chromium` (Debian/Ubuntu), or point MEMGATE_CHROMIUM at a Chromium binary.',
    );
  }
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const userDataDir = mkdtempSync(join(tmpdir(), 'memgate-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: ARGS,
    viewport: { width: 1360, height: 900 },
    timeout: 60_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
