/**
 * Arithmetic on CPU and memory amounts, for the rules that compare resources.
 *
 * cdk8s types are imported as types only: the webhook server uses this module without cdk8s.
 */
import type { Size } from 'cdk8s';
import type { Cpu } from 'cdk8s-plus-27';

const DECIMAL_SUFFIX: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/**
 * Parses a Kubernetes quantity (`500m`, `1.5`, `1Gi`, `2e3`) into its value in base units.
 *
 * @returns the value, or `undefined` when the text is not a quantity
 */
export function parseQuantity(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) ? text : undefined;
  const match = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([KMGTPE]i)|([numkMGTPE]?)|[eE]([+-]?\d+))$/.exec(text.trim());
  if (!match) return undefined;
  const [, number, binary, decimal, exponent] = match;
  const base = Number(number);
  if (binary) return base * BINARY_SUFFIX[binary];
  if (exponent !== undefined) return base * 10 ** Number(exponent);
  return base * DECIMAL_SUFFIX[decimal ?? ''];
}

/** Millicores of a cdk8s-plus `Cpu`. */
export function cpuMillis(cpu: Cpu): number {
  return Math.round(parseQuantity(cpu.amount)! * 1000);
}

/** Bytes of a cdk8s `Size`. */
export function sizeBytes(size: Size): number {
  return parseQuantity(size.asString())!;
}

/** The larger of two CPU amounts. */
export function maxCpu(a: Cpu, b: Cpu): Cpu {
  return cpuMillis(a) >= cpuMillis(b) ? a : b;
}

/** The larger of two sizes. */
export function maxSize(a: Size, b: Size): Size {
  return sizeBytes(a) >= sizeBytes(b) ? a : b;
}
