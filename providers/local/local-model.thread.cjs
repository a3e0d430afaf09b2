// The entry file of a local model thread (`LocalModelPool`) run from the sources (the compiled
// build starts `local-model.worker.js` itself). It is plain JavaScript because Node
// reads a worker's entry file before the TypeScript loader the process was started with
// (`--import tsx`) applies to the thread; required from here, the worker's code is compiled by it.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS entry, on purpose
require('./local-model.worker.ts');
