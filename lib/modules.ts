import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

// Cairn runs in two forms: compiled JavaScript under dist/ (`npm start`, the Docker image) and its
// TypeScript sources through tsx (the tests). Files loaded by path at run time (the entry files of
// worker threads, package.json) are found from the caller's own URL, so they resolve in both.

/** Whether the module at `moduleUrl` (its `import.meta.url`) is a TypeScript source run through tsx. */
export function isSource(moduleUrl: string): boolean {
  return new URL(moduleUrl).pathname.endsWith('.ts');
}

/**
 * The module `name` (without extension) in the folder of `moduleUrl`, with the caller's own
 * extension: `document.worker.ts` beside a source, `document.worker.js` beside a compiled file.
 */
export function siblingModule(moduleUrl: string, name: string): URL {
  return new URL(`./${name}${isSource(moduleUrl) ? '.ts' : '.js'}`, moduleUrl);
}

let version: string | null = null;

/**
 * The version in Cairn's package.json, found upwards from this file: one folder up from the
 * sources (`lib/`), two from the compiled build (`dist/lib/`).
 */
export function packageVersion(): string {
  if (version !== null) return version;
  let folder = new URL('../', import.meta.url);
  for (;;) {
    const file = new URL('package.json', folder);
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'cairn' && typeof pkg.version === 'string') return (version = pkg.version);
    }
    const parent = new URL('../', folder);
    if (parent.href === folder.href) throw new Error(`No package.json of cairn above ${fileURLToPath(import.meta.url)}`);
    folder = parent;
  }
}
