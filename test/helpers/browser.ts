import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from './app.ts';

/**
 * The system's headless Chromium (Debian `chromium`) driven by playwright-core, with a new empty
 * user data dir and every request outside `base` refused, so a page that reaches for the internet
 * is caught. CI installs chromium (.ci/run) and browser tests must run there; on a developer
 * machine without it they skip with a message.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

type T = { after(fn: () => unknown): void; skip(msg: string): void };

export type OfflineBrowser = { context: BrowserContext; page: Page; outside: string[] };

/** Null when the test was skipped for want of chromium. */
export async function offlineBrowser(
  t: T,
  base: string,
  opts: {
    viewport: { width: number; height: number };
    onRequest?: (url: string, headers: Record<string, string>) => void;
  },
): Promise<OfflineBrowser | null> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true')
      assert.fail(`${CHROMIUM} missing: .ci/run installs Debian chromium before the tests`);
    t.skip(`${CHROMIUM} not installed (apt-get install -y chromium); the browser test runs in CI`);
    return null;
  }
  // A persistent context is how playwright takes a user data dir: a new empty one per run.
  const context = await chromium.launchPersistentContext(tempDir(t, 'isocast-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: opts.viewport,
  });
  t.after(() => context.close());
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (!url.startsWith(base + '/')) {
      outside.push(url);
      return route.abort('internetdisconnected');
    }
    opts.onRequest?.(url, route.request().headers());
    return route.continue();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return { context, page, outside };
}
