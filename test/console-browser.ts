import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, PROFILE, repoRoot, tempDir } from './helpers.js';

// The console's browser tests' tools: Debian's Chromium, headless, recording every fault of a
// page (console errors, uncaught exceptions, failed requests, error answers, other hosts); axe-core
// for its serious accessibility faults; a screenshot of each page checked; the sign-in.

export const SCREENSHOTS = path.join(repoRoot, '.cache', 'console-screenshots');
const AXE = fs.readFileSync(path.join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** What the tests read of a page's globals (the test suite is compiled without the DOM's types). */
export interface PageGlobals {
  document: { cookie: string; activeElement: { textContent: string | null; tagName: string } | null };
  localStorage: Record<string, string>;
  sessionStorage: Record<string, string>;
  axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> };
}
export interface Visit {
  page: Page;
  /** Console errors, uncaught exceptions, failed requests and error answers since the browser opened. */
  faults: string[];
}

/** Browsers on the console served at `base()`; `closeAll` closes every one opened. */
export function consoleBrowsers(base: () => string) {
  const open: BrowserContext[] = [];

  /** A fresh Chromium profile whose every fault is recorded. */
  async function browser(options: { colorScheme?: 'light' | 'dark' } = {}): Promise<Visit> {
    // the page's policy allows only its own scripts: axe is injected past it, as a test's tool
    const context = await chromium.launchPersistentContext(tempDir('cairn-chromium-'), {
      ...CHROMIUM,
      bypassCSP: true,
      viewport: { width: 1200, height: 800 },
      ...options,
    });
    open.push(context);
    const page = context.pages()[0] ?? (await context.newPage());
    const faults: string[] = [];
    page.on('console', (m) => m.type() === 'error' && faults.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => faults.push(`exception: ${e.message}`));
    page.on('requestfailed', (r) => faults.push(`failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('response', (r) => r.status() >= 400 && faults.push(`${r.status()}: ${r.request().method()} ${r.url()}`));
    page.on('request', (r) => new URL(r.url()).host !== new URL(base()).host && faults.push(`another host: ${r.url()}`));
    return { page, faults };
  }

  /** Serious and critical accessibility faults axe-core finds on the page as it is. */
  async function axeFaults(page: Page): Promise<string[]> {
    await page.addScriptTag({ content: AXE });
    const found = await page.evaluate(async () => {
      const g = globalThis as unknown as PageGlobals;
      const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 3) }));
    });
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id} at ${v.targets.join(', ')}`);
  }

  /** Checks the page as it is now: no faults so far, no serious accessibility fault; saves its screenshot. */
  async function checkPage(visit: Visit, name: string): Promise<void> {
    expect(visit.faults, `faults on ${name}`).to.deep.equal([]);
    expect(await axeFaults(visit.page), `axe on ${name}`).to.deep.equal([]);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await visit.page.screenshot({ path: path.join(SCREENSHOTS, `${PROFILE}-${name}.png`), fullPage: true });
  }

  /** Signs in on the page at `path` (the console's first by default), which then shows. */
  async function signIn(page: Page, key: string, path = '/console'): Promise<void> {
    await page.goto(`${base()}${path}`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // the page's first calls answered: a test's next goto would abort them, a fault of the test's making
    await page.getByText(/^(Loading|Searching)…$/).first().waitFor({ state: 'hidden' });
  }

  return { browser, axeFaults, checkPage, signIn, closeAll: () => Promise.all(open.map((c) => c.close())) };
}
