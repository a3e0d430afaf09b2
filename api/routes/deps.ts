import type { Runtime } from '../../lib/runtime.js';

/** What route factories are given. */
export interface RouteDeps {
  runtime: Runtime;
}
