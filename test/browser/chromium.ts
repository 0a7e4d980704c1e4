import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (browsers cannot be downloaded here). ./scripts/test.sh
 * installs the package when it is missing. Playwright starts each launch with a new, empty profile
 * directory of its own.
 */
export const CHROMIUM = '/usr/bin/chromium';

/** Without the background-networking flags Chromium keeps trying to reach Google's hosts from a closed network. */
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

export const SCREENSHOT_DIR = path.resolve('test-results/screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: apt-get install -y chromium (./scripts/test.sh does this when run as root)`,
    );
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  /** Requests that left the service's origin: the console must work offline. */
  foreignRequests: string[];
}

/** A fresh browser context (no cookies) on the service, optionally already signed in with a session cookie. */
export async function openConsole(
  browser: Browser,
  baseUrl: string,
  opts: { cookie?: string; width?: number } = {},
): Promise<ConsoleBrowser> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: opts.width ?? 1280, height: 900 } });
  if (opts.cookie) {
    const [name, value] = opts.cookie.split(';')[0]!.split('=');
    await context.addCookies([{ name: name!, value: value!, url: baseUrl }]);
  }
  const foreignRequests: string[] = [];
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(baseUrl) && !url.startsWith('data:')) foreignRequests.push(url);
  });
  // Waits are ceilings, not budgets: on a slow, busy host a page may take many seconds to render an answer.
  context.setDefaultTimeout(60_000);
  const page = await context.newPage();
  // A crash inside the app shows as a blank page; surface it in the test output instead.
  page.on('pageerror', (error) => process.stderr.write(`[browser] ${error.message}\n`));
  return { context, page, foreignRequests };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}
