/**
 * JSON logs, one object per line, as log collectors expect them:
 * `{"level":"info","time":"2026-11-21T20:14:58.980Z","component":"serverless-webhook",...,"msg":"listening"}`.
 *
 * Written here rather than with a logging library: the server is bundled into one file that
 * ships in a ConfigMap, and four levels of JSON lines need no more than this.
 */
import { LogLevel } from '../log-level';

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

/**
 * How long a log line may grow: every string field is cut to `maxStringChars`, every list to
 * `maxItems`, every object to `maxKeys` keys, anything below `maxDepth` levels is replaced by its
 * type, each cut with a marker that says how much was left out; a line still longer than
 * `maxLineChars` keeps only its level, time, component and message.
 */
export const LOG_LIMITS = { maxStringChars: 512, maxItems: 20, maxKeys: 40, maxDepth: 4, maxLineChars: 8192 } as const;

/** A field value as JSON can hold it, bounded (see {@link LOG_LIMITS}): BigInts as text, anything else unwritable by its type. */
function writable(value: unknown, depth = 0): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    return value.length <= LOG_LIMITS.maxStringChars ? value : `${value.slice(0, LOG_LIMITS.maxStringChars)}…[${value.length - LOG_LIMITS.maxStringChars} more chars]`;
  }
  if (typeof value === 'function' || typeof value === 'symbol') return `[${typeof value}]`;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= LOG_LIMITS.maxDepth) return `[${Array.isArray(value) ? 'array' : 'object'}]`;
  if (Array.isArray(value)) {
    const items = value.slice(0, LOG_LIMITS.maxItems).map(item => writable(item, depth + 1));
    return value.length > LOG_LIMITS.maxItems ? [...items, `…[${value.length - LOG_LIMITS.maxItems} more items]`] : items;
  }
  if (value instanceof Error) return writable(value.stack ?? value.message, depth);
  const out: { [key: string]: unknown } = {};
  let keys = 0;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (keys++ === LOG_LIMITS.maxKeys) {
      out['…'] = 'more keys left out';
      break;
    }
    out[writable(key, LOG_LIMITS.maxDepth) as string] = writable((value as { [key: string]: unknown })[key], depth + 1);
  }
  return out;
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
    const bounded = writable(fields, -1) as { [key: string]: unknown };
    for (const [key, value] of Object.entries(bounded)) {
      if (value !== undefined && !(key in record)) record[key] = value;
    }
    const msg = writable(typeof fieldsOrMessage === 'string' ? fieldsOrMessage : message ?? '');
    record.msg = msg;
    let line = JSON.stringify(record);
    if (line.length > LOG_LIMITS.maxLineChars) {
      line = JSON.stringify({ level: at, time: record.time, component, truncated: `the fields took ${line.length} characters, more than ${LOG_LIMITS.maxLineChars}`, msg });
    }
    destination.write(`${line}\n`);
  };
  return { debug: logAt(LogLevel.DEBUG), info: logAt(LogLevel.INFO), warn: logAt(LogLevel.WARN), error: logAt(LogLevel.ERROR) };
}
