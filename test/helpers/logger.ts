import { createLogger, type Level, type Logger } from '../../src/lib/logger.ts';

/** A logger that keeps lines in memory: tests grep it for leaked secrets. */
export function memoryLogger(level: Level = 'debug'): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({ level, write: (l) => lines.push(l) });
  return Object.assign(logger, { lines });
}
