import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The process logger: JSON lines on stdout. Anything that could carry a credential is redacted
 * at the source, so a secret never reaches a log line even when a whole object is logged.
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'cairn', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        '*.authorization',
        '*.apiKey',
        '*.api_key',
        '*.key',
        '*.secret',
        '*.password',
        '*.token',
      ],
      censor: '[redacted]',
    },
  });
}
