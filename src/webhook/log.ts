/**
 * JSON logs, one object per line, as log collectors expect them:
 * `{"level":"info","time":"2026-11-21T20:14:58.980Z","component":"serverless-webhook",...,"msg":"listening"}`.
 *
 * Written here rather than with a logging library: the server is bundled into one file that
 * ships in a ConfigMap, and four levels of JSON lines need no more than this.
 */
import { LogLevel } from '../log-level';

export { LogLevel };

/** Fields of one log line, written between `component` and `msg`. */
export type LogFields = { readonly [key: string]: unknown };

/** Where lines go: standard output, or any stream (tests). */
export interface LogDestination {
  write(line: string): unknown;
}

/** The logger the webhook writes with. */
export interface Logger {
  debug(fields: LogFields, message: string): void;
  debug(message: string): void;
  info(fields: LogFields, message: string): void;
  info(message: string): void;
  warn(fields: LogFields, message: string): void;
  warn(message: string): void;
  error(fields: LogFields, message: string): void;
  error(message: string): void;
}

const SEVERITY: { readonly [level in LogLevel]: number } = {
  [LogLevel.DEBUG]: 0,
  [LogLevel.INFO]: 1,
  [LogLevel.WARN]: 2,
  [LogLevel.ERROR]: 3,
};

/** A field value as JSON can hold it: BigInts as text, anything circular or unwritable by its type. */
function writable(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  try {
    JSON.stringify(value);
    return value;
  } catch {
    return `[${Array.isArray(value) ? 'array' : typeof value}]`;
  }
}

/**
 * Creates a logger that writes JSON lines with an ISO time, `level` as a word, and `msg` last.
 *
 * @param level the lowest level written
 * @param destination where to write
 * @param component the value of the `component` field
 * @default destination - standard output (synchronous for files and pipes on Linux, so nothing is lost on exit)
 */
export function createLogger(
  level: LogLevel = LogLevel.INFO,
  destination: LogDestination = process.stdout,
  component = 'serverless-webhook',
): Logger {
  const lowest = SEVERITY[level];
  const logAt = (at: LogLevel) => (fieldsOrMessage: LogFields | string, message?: string) => {
    if (SEVERITY[at] < lowest) return;
    const fields = typeof fieldsOrMessage === 'string' ? {} : fieldsOrMessage;
    const record: { [key: string]: unknown } = { level: at, time: new Date().toISOString(), component };
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined && !(key in record)) record[key] = writable(value);
    }
    record.msg = typeof fieldsOrMessage === 'string' ? fieldsOrMessage : message ?? '';
    destination.write(`${JSON.stringify(record)}\n`);
  };
  return { debug: logAt(LogLevel.DEBUG), info: logAt(LogLevel.INFO), warn: logAt(LogLevel.WARN), error: logAt(LogLevel.ERROR) };
}
