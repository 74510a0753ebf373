import { LogLevel } from '../../src/log-level';
import { LOG_LIMITS, createLogger } from '../../src/webhook/log';

function capture(level: LogLevel) {
  const lines: string[] = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(line) });
  return { logger, lines, records: () => lines.map(line => JSON.parse(line)) };
}

describe('createLogger', () => {
  test('writes one JSON object per line: level, time, component, the fields, then msg', () => {
    const { logger, lines } = capture(LogLevel.INFO);
    logger.info({ uid: 'u-1', allowed: true, durationMs: 0.5 }, 'allowed');
    expect(lines).toHaveLength(1);
    expect(lines[0].endsWith('\n')).toBe(true);
    expect(lines[0].split('\n')).toHaveLength(2);
    const record = JSON.parse(lines[0]);
    expect(Object.keys(record)).toEqual(['level', 'time', 'component', 'uid', 'allowed', 'durationMs', 'msg']);
    expect(record).toMatchObject({ level: 'info', component: 'serverless-webhook', uid: 'u-1', allowed: true, durationMs: 0.5, msg: 'allowed' });
    expect(new Date(record.time).toISOString()).toBe(record.time);
  });

  test('takes a message alone', () => {
    const { logger, records } = capture(LogLevel.INFO);
    logger.info('stopped');
    expect(records()).toEqual([{ level: 'info', time: expect.any(String), component: 'serverless-webhook', msg: 'stopped' }]);
  });

  test('drops lines below its level and keeps the rest', () => {
    const { logger, records } = capture(LogLevel.WARN);
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error({ err: 'boom' }, 'e');
    expect(records().map(r => [r.level, r.msg])).toEqual([['warn', 'w'], ['error', 'e']]);
  });

  test('keeps its own keys when fields use the same names, and leaves out undefined fields', () => {
    const { logger, records } = capture(LogLevel.DEBUG);
    logger.debug({ level: 'fake', msg: 'fake', time: 0, component: 'x', gone: undefined }, 'real');
    expect(records()).toEqual([{ level: 'debug', time: expect.any(String), component: 'serverless-webhook', msg: 'real' }]);
  });

  test('writes values JSON cannot hold without losing the line', () => {
    const { logger, records } = capture(LogLevel.INFO);
    const circular: { [key: string]: unknown } = {};
    circular.self = circular;
    logger.info({ big: 10n, circular, list: [1, 2] }, 'odd values');
    // A cycle is cut where the depth bound is: no line is lost, none grows without end.
    expect(records()[0]).toMatchObject({ big: '10', circular: { self: { self: { self: { self: '[object]' } } } }, list: [1, 2], msg: 'odd values' });
  });
});

describe('log lines are bounded, whatever a request holds', () => {
  test('cuts a long string with a marker that says how much was left out', () => {
    const { logger, records, lines } = capture(LogLevel.INFO);
    const uid = 'u'.repeat(2 * 1024 * 1024);
    logger.info({ uid }, 'x'.repeat(10_000));
    const record = records()[0];
    expect(record.uid).toBe(`${'u'.repeat(LOG_LIMITS.maxStringChars)}…[${uid.length - LOG_LIMITS.maxStringChars} more chars]`);
    expect(record.msg).toMatch(/^x{512}…\[9488 more chars\]$/);
    expect(lines[0].length).toBeLessThanOrEqual(LOG_LIMITS.maxLineChars + 1);
  });

  test('keeps the first items of a long list and says how many more there were', () => {
    const { logger, records } = capture(LogLevel.INFO);
    logger.info({ fields: Array.from({ length: 150_000 }, (_, i) => `spec.labels.k${i}`) }, 'denied');
    const fields = records()[0].fields as string[];
    expect(fields).toHaveLength(LOG_LIMITS.maxItems + 1);
    expect(fields[0]).toBe('spec.labels.k0');
    expect(fields[LOG_LIMITS.maxItems]).toBe(`…[${150_000 - LOG_LIMITS.maxItems} more items]`);
  });

  test('keeps the first keys of a large object, and replaces what nests too deep by its type', () => {
    const { logger, records } = capture(LogLevel.INFO);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 5000; i++) deep = { d: deep };
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    logger.info({ deep, wide }, 'odd request');
    const record = records()[0];
    expect(record.deep).toEqual({ d: { d: { d: { d: '[object]' } } } });
    expect(Object.keys(record.wide)).toHaveLength(LOG_LIMITS.maxKeys + 1);
    expect(record.wide['…']).toBe('more keys left out');
  });

  test('a line whose bounded fields still exceed the line limit keeps only its level, time, component and message', () => {
    const { logger, records, lines } = capture(LogLevel.INFO);
    const many = Object.fromEntries(Array.from({ length: 39 }, (_, i) => [`f${i}`, 'v'.repeat(5000)]));
    logger.warn(many, 'request refused');
    expect(lines[0].length).toBeLessThanOrEqual(LOG_LIMITS.maxLineChars + 1);
    expect(records()[0]).toEqual({
      level: 'warn', time: expect.any(String), component: 'serverless-webhook', truncated: expect.stringMatching(/^the fields took \d+ characters, more than 8192$/), msg: 'request refused',
    });
  });
});
