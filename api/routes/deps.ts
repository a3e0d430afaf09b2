import type { Runtime } from '../../runtime/runtime.js';

/** What route factories are given. */
export interface RouteDeps {
  runtime: Runtime;
}
