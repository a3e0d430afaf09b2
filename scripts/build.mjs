// Compiles Cairn's TypeScript into dist/ (one JavaScript file and source map per source file, the
// folders kept as they are, so paths taken from `import.meta.url` resolve alike), and copies the
// other files of the source folders beside them; bundles the web console (console/) into
// dist/console (its page, one script and one stylesheet, which the API serves at /console).
// Plain JavaScript, so that it runs before anything is compiled and `npm start` checks dist/ in a
// few milliseconds.
//
//   node scripts/build.mjs              build dist/ (`npm ci` runs it: the `prepare` script)
//   node scripts/build.mjs --if-stale   build only when dist/ is missing or older than a source
//                                       (the `pre` scripts of `npm start`, `start:api`, …)
//
// The new build is written beside dist/ and moved into place whole, so a process starting
// meanwhile never loads half of one. The Docker image holds dist/ without the sources: nothing to
// compare, dist/ is used as it is.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(root, 'dist');
const STAMP = path.join(OUT, '.build.json');
/** The folders compiled; test/ is not (the tests run the sources through tsx). */
const FOLDERS = ['api', 'runtime', 'jobs', 'workers', 'core', 'db', 'providers', 'contracts', 'lib', 'scripts'];
/** The web console: bundled for the browser, not compiled file by file. */
const CONSOLE = 'console';
/**
 * Left out: the benchmarks, the test runner and the console's type generator run through tsx;
 * this script; the console's generated types (`npm run check` writes them; the bundle needs none).
 */
const SKIP = new Set([
  path.join('scripts', 'bench'),
  path.join('scripts', 'test.ts'),
  path.join('scripts', 'openapi-types.ts'),
  path.join('scripts', 'build.mjs'),
  path.join(CONSOLE, 'generated'),
]);
/** Files whose change calls for a new build though they are not compiled. */
const INPUTS = ['package.json', path.join('scripts', 'build.mjs')];

/** Every file of the source folders, relative to the root, sorted. */
function sourceFiles() {
  const files = [];
  const walk = (rel) => {
    let entries;
    try {
      entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = path.join(rel, entry.name);
      if (SKIP.has(child)) continue;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) files.push(child);
    }
  };
  for (const folder of [...FOLDERS, CONSOLE]) walk(folder);
  return files.sort();
}

/** Why dist/ needs building, or null when it is up to date. */
function staleness(files) {
  let stamp;
  try {
    stamp = { ...JSON.parse(fs.readFileSync(STAMP, 'utf8')), mtimeMs: fs.statSync(STAMP).mtimeMs };
  } catch {
    return 'dist/ has not been built';
  }
  if (JSON.stringify(stamp.files) !== JSON.stringify(files)) return 'source files were added or removed';
  for (const file of [...files, ...INPUTS]) {
    if (fs.statSync(path.join(root, file)).mtimeMs > stamp.mtimeMs) return `${file} changed`;
  }
  return null;
}

async function build(files) {
  const { build: esbuild } = await import('esbuild');
  const next = path.join(root, `.dist-${process.pid}`);
  fs.rmSync(next, { recursive: true, force: true });
  const started = Date.now();
  const server = files.filter((f) => !f.startsWith(`${CONSOLE}${path.sep}`));
  let consoleKb;
  try {
    await esbuild({
      entryPoints: server.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => path.join(root, f)),
      outdir: next,
      outbase: root,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'warning',
    });
    // everything else (thread entry files in CommonJS, shell scripts) goes beside the compiled files
    for (const file of server.filter((f) => !f.endsWith('.ts'))) {
      fs.mkdirSync(path.dirname(path.join(next, file)), { recursive: true });
      fs.copyFileSync(path.join(root, file), path.join(next, file));
      fs.chmodSync(path.join(next, file), fs.statSync(path.join(root, file)).mode);
    }
    consoleKb = await bundleConsole(esbuild, path.join(next, CONSOLE));
    fs.writeFileSync(path.join(next, '.build.json'), `${JSON.stringify({ files }, null, 1)}\n`);
    // moved into place whole: the old build aside first, then the new one in, then the old one away
    const old = path.join(root, `.dist-old-${process.pid}`);
    if (fs.existsSync(OUT)) fs.renameSync(OUT, old);
    fs.renameSync(next, OUT);
    fs.rmSync(old, { recursive: true, force: true });
  } finally {
    fs.rmSync(next, { recursive: true, force: true });
  }
  console.error(`cairn: built dist/ (${files.length} files; console script ${consoleKb} KB gzipped) in ${Date.now() - started} ms`);
}

/**
 * The console for browsers: console/main.tsx and all it imports (Preact, openapi-fetch) as one
 * minified script and one stylesheet, beside its page. Answers the script's gzipped size in KB.
 */
async function bundleConsole(esbuild, out) {
  await esbuild({
    entryPoints: { app: path.join(root, CONSOLE, 'main.tsx') },
    bundle: true,
    outdir: out,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(root, CONSOLE, 'index.html'), path.join(out, 'index.html'));
  return (zlib.gzipSync(fs.readFileSync(path.join(out, 'app.js'))).length / 1024).toFixed(1);
}

const files = sourceFiles();
if (!files.some((f) => f.endsWith('.ts'))) {
  // the Docker image (dist/ only), or `npm ci` before the sources are copied in
  if (!fs.existsSync(OUT)) console.error('cairn: no sources to build dist/ from');
} else if (!process.argv.includes('--if-stale')) {
  await build(files);
} else {
  const reason = staleness(files);
  if (reason !== null) {
    console.error(`cairn: building dist/: ${reason}`);
    await build(files);
  }
}
