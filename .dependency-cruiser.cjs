/**
 * The house plan, enforced by `npm run check`: each top-level folder imports only the folders
 * listed under it (its floor and below), so folders form no cycle; no file imports itself back
 * through others; routes get their services handed in, never the whole runtime.
 *
 *   scripts   entry points, benchmarks, the test runner
 *   api       HTTP: routes, middleware, OpenAPI            → runtime (app.ts only), core, contracts, lib
 *   runtime   the composition root: builds a profile      → everything below
 *   jobs      job handlers: a job's payload → a service   → core, contracts, lib
 *   workers   queue drivers and the outbox relay          → db, contracts, lib
 *   core      the domain services                         → db, providers, contracts, lib
 *   db        SQL repositories, vector stores, Redis      → contracts, lib
 *   providers local / cohere / openai models              → contracts, lib
 *   contracts filter language, job catalogue, store API   → lib
 *   lib       errors, time, logging, config, validation   → nothing of Cairn's
 *
 * Beside them, console/ (the web console, run in the browser) imports only console/ and packages:
 * it knows the server only as the types generated from /openapi.json (console/generated/), and
 * no server folder imports it.
 */
const FOLDERS = ['scripts', 'api', 'runtime', 'jobs', 'workers', 'core', 'db', 'providers', 'contracts', 'lib'];
const MAY_IMPORT = {
  api: ['runtime', 'core', 'contracts', 'lib'],
  runtime: ['jobs', 'workers', 'core', 'db', 'providers', 'contracts', 'lib'],
  jobs: ['core', 'contracts', 'lib'],
  workers: ['db', 'contracts', 'lib'],
  core: ['db', 'providers', 'contracts', 'lib'],
  db: ['contracts', 'lib'],
  providers: ['contracts', 'lib'],
  contracts: ['lib'],
  lib: [],
};
const layerRules = Object.entries(MAY_IMPORT).map(([folder, allowed]) => ({
  name: `${folder}-imports-below`,
  comment: `${folder}/ may import only ${allowed.length ? allowed.map((f) => `${f}/`).join(', ') : "packages (it is the leaf)"}`,
  severity: 'error',
  from: { path: `^${folder}/` },
  to: { path: `^(${FOLDERS.filter((f) => f !== folder && !allowed.includes(f)).join('|')}|test)/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'console-imports-console',
      comment: 'console/ runs in the browser: it imports only console/ (the API as types generated from /openapi.json) and packages',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: `^(${FOLDERS.join('|')}|test)/` },
    },
    {
      name: 'server-does-not-import-console',
      comment: 'the server serves the console as a bundle (dist/console) and imports nothing of it',
      severity: 'error',
      from: { path: `^(${FOLDERS.join('|')})/` },
      to: { path: '^console/' },
    },
    {
      name: 'routes-get-services',
      comment: 'a route is handed the services it uses (api/app.ts picks them from the runtime)',
      severity: 'error',
      from: { path: '^api/(?!app\\.ts$)' },
      to: { path: '^runtime/' },
    },
    {
      name: 'no-circular',
      comment: 'files that import each other in a loop',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|data|\\.cache|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.tsx', '.js', '.json'] },
  },
};
