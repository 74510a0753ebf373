import { LogLevel, createLogger } from '../../src/webhook/log';

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
    expect(records()[0]).toMatchObject({ big: '10', circular: '[object]', list: [1, 2], msg: 'odd values' });
  });
});
