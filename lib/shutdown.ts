import type { Logger } from './logger.js';
import { withTimeout } from './time.js';

/** Shutdown phases, run in this order: stop taking work first, close storage last. */
export const ShutdownPhase = {
  http: 1,
  workers: 2,
  queues: 3,
  database: 4,
  vectors: 5,
  redis: 6,
  /** Spans ended by the phases before are flushed last. */
  telemetry: 7,
} as const;

type Phase = (typeof ShutdownPhase)[keyof typeof ShutdownPhase];

interface Step {
  name: string;
  phase: Phase;
  close: () => Promise<void>;
}

/**
 * An ordered registry of things to close. `run()` closes them phase by phase (steps of one
 * phase in parallel) and is idempotent; a force-quit timer guards against a step that hangs.
 */
export class Shutdown {
  private readonly steps: Step[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /** Registers something to close in the given phase. */
  add(name: string, phase: Phase, close: () => Promise<void>): void {
    this.steps.push({ name, phase, close });
  }

  /** Closes everything in phase order. Later calls return the first call's promise. */
  run(): Promise<void> {
    this.running ??= this.closeAll();
    return this.running;
  }

  /** Runs `run()` on SIGINT/SIGTERM and exits; exits non-zero if closing takes too long. */
  handleSignals(exit: (code: number) => void = (code) => process.exit(code)): void {
    const onSignal = (signal: NodeJS.Signals): void => {
      this.logger.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        this.logger.error({ timeoutMs: this.timeoutMs }, 'shutdown timed out; forcing exit');
        exit(1);
      }, this.timeoutMs);
      timer.unref();
      this.run().then(
        () => exit(0),
        () => exit(1),
      );
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }

  private async closeAll(): Promise<void> {
    const phases = [...new Set(this.steps.map((s) => s.phase))].sort((a, b) => a - b);
    for (const phase of phases) {
      const steps = this.steps.filter((s) => s.phase === phase).reverse();
      await Promise.all(
        steps.map(async (step) => {
          try {
            // A step that hangs (a client stuck reconnecting) must not keep later phases from closing.
            await withTimeout(step.close(), this.timeoutMs, `${step.name} did not close within ${this.timeoutMs} ms`);
            this.logger.debug({ step: step.name }, 'closed');
          } catch (err) {
            this.logger.warn({ step: step.name, err }, 'error while closing');
          }
        }),
      );
    }
  }
}
