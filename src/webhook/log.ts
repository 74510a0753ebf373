/**
 * JSON logs, one object per line, as log collectors expect them.
 */
import pino from 'pino';
import { LogLevel } from '../log-level';

export { LogLevel };

/** The logger the webhook writes with. */
export type Logger = pino.Logger;

/**
 * Creates a logger that writes JSON lines with an ISO time, `level` as a word, and `msg`.
 *
 * @param level the lowest level written
 * @param destination where to write
 * @default destination - standard output, synchronously (nothing is lost on exit)
 */
export function createLogger(level: LogLevel = LogLevel.INFO, destination?: pino.DestinationStream): Logger {
  return pino({
    level,
    base: { component: 'serverless-webhook' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: label => ({ level: label }) },
  }, destination ?? pino.destination({ dest: 1, sync: true }));
}
