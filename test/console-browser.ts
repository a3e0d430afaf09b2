import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, PROFILE, repoRoot, tempDir, type TestRuntime } from './helpers.js';

// What the console's browser tests share: the runtime's app behind a real listener, Debian's
// Chromium (headless) whose every fault is recorded, axe-core, a screenshot of each page checked,
// and signing in with a key as a person does.

/** Where each page checked is saved, as `<profile>-<name>.png`. */
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

/** The console of one runtime, served on a port of its own, and the browsers opened on it. */
export class ConsoleBrowser {
  private readonly open: BrowserContext[] = [];

  private constructor(
    private readonly server: http.Server,
    /** `http://127.0.0.1:<port>` */
    readonly base: string,
  ) {}

  static async serve(t: TestRuntime): Promise<ConsoleBrowser> {
    const server = http.createServer(t.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    return new ConsoleBrowser(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** A fresh Chromium profile whose every fault is recorded. */
  async browser(options: { colorScheme?: 'light' | 'dark'; clipboard?: boolean } = {}): Promise<Visit> {
    const { clipboard, ...launch } = options;
    // the page's policy allows only its own scripts: axe is injected past it, as a test's tool
    const context = await chromium.launchPersistentContext(tempDir('cairn-chromium-'), { ...CHROMIUM, bypassCSP: true, viewport: { width: 1200, height: 800 }, ...launch });
    this.open.push(context);
    if (clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: this.base });
    const page = context.pages()[0] ?? (await context.newPage());
    const faults: string[] = [];
    page.on('console', (m) => m.type() === 'error' && faults.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => faults.push(`exception: ${e.message}`));
    page.on('requestfailed', (r) => faults.push(`failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('response', (r) => r.status() >= 400 && faults.push(`${r.status()}: ${r.request().method()} ${r.url()}`));
    page.on('request', (r) => new URL(r.url()).host !== new URL(this.base).host && faults.push(`another host: ${r.url()}`));
    return { page, faults };
  }

  /**
   * Opens `path` (the console's first page by default), signs in there with a project key (or the
   * operator's token) and waits until the page has its answers.
   */
  async signIn(page: Page, key: string, path = '/console'): Promise<void> {
    await page.goto(`${this.base}${path}`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // the page's first calls are answered before a test moves on (a later goto would abort them)
    await page.getByText(/^(Loading|Searching)…$/).first().waitFor({ state: 'hidden' });
    await page.waitForLoadState('networkidle');
  }

  /** Checks the page as it is now: no faults so far, no serious accessibility fault; saves its screenshot. */
  async checkPage(visit: Visit, name: string): Promise<void> {
    expect(visit.faults, `faults on ${name}`).to.deep.equal([]);
    expect(await axeFaults(visit.page), `axe on ${name}`).to.deep.equal([]);
    await visit.page.screenshot({ path: path.join(SCREENSHOTS, `${PROFILE}-${name}.png`), fullPage: true });
  }

  async close(): Promise<void> {
    await Promise.all(this.open.splice(0).map((c) => c.close()));
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Serious and critical accessibility faults axe-core finds on the page as it is. */
export async function axeFaults(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const found = await page.evaluate(async () => {
    const g = globalThis as unknown as PageGlobals;
    const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 3) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id} at ${v.targets.join(', ')}`);
}
