import type { Probes } from '../core/probes.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `probe.touch`: completes a pipeline probe. */
export const probeTouchJob =
  (probes: Probes): JobHandler<'probe.touch'> =>
  (payload, ctx) =>
    probes.touch(payload.projectId, payload.probeId, ctx);
