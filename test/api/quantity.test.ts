import { Size } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import { parseQuantity } from '../../src/api';
import { cpuMillis, maxCpu, maxSize, sizeBytes } from '../../src/api/quantity';

describe('quantities', () => {
  test.each([
    ['500m', 0.5], ['1', 1], ['1.5', 1.5], ['.5', 0.5], ['2k', 2000], ['1Ki', 1024], ['1Gi', 2 ** 30], ['3e2', 300], [250, 250], ['100M', 1e8],
  ])('parses %p', (text, value) => {
    expect(parseQuantity(text)).toBeCloseTo(value);
  });

  test.each(['', 'lots', '1 Gi', '1GiB', 'm'])('rejects %p', text => {
    expect(parseQuantity(text)).toBeUndefined();
  });

  test('CPU and sizes compare by value, not by spelling', () => {
    expect(cpuMillis(Cpu.units(1))).toBe(1000);
    expect(maxCpu(Cpu.millis(1700), Cpu.units(1)).amount).toBe('1700m');
    expect(sizeBytes(Size.gibibytes(1))).toBe(sizeBytes(Size.mebibytes(1024)));
    expect(maxSize(Size.mebibytes(2048), Size.gibibytes(1)).asString()).toBe('2048Mi');
  });

  test('millicores round-trip for any whole amount', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 1_000_000 }), m => cpuMillis(Cpu.millis(m)) === m));
  });
});
