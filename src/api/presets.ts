/**
 * Resource presets: the named sets of requests and limits a Function or its build Job can use.
 *
 * The names are part of the Function API (`profiles.ts`); the values are stack configuration,
 * handed to the controller, and the defaults below are upstream 1.11.1's.
 */
import { Size } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { BuildProfile, FunctionProfile, MinimumRequest } from './profiles';
import { cpuMillis, parseQuantity, sizeBytes } from './quantity';

/** Requests and limits of one preset. */
export interface ResourcePreset {
  /** CPU the container is guaranteed. */
  readonly requestCpu: Cpu;
  /** Memory the container is guaranteed. */
  readonly requestMemory: Size;
  /** The most CPU the container may use. */
  readonly limitCpu: Cpu;
  /** The most memory the container may use. */
  readonly limitMemory: Size;
}

function preset(requestCpu: number, requestMemoryMi: number, limitCpu: number, limitMemoryMi: number): ResourcePreset {
  return {
    requestCpu: Cpu.millis(requestCpu),
    requestMemory: Size.mebibytes(requestMemoryMi),
    limitCpu: Cpu.millis(limitCpu),
    limitMemory: Size.mebibytes(limitMemoryMi),
  };
}

/** Upstream 1.11.1's Function presets. */
export const DEFAULT_FUNCTION_PRESETS: { readonly [P in FunctionProfile]: ResourcePreset } = {
  [FunctionProfile.XS]: preset(50, 64, 150, 256),
  [FunctionProfile.S]: preset(100, 128, 200, 256),
  [FunctionProfile.M]: preset(200, 256, 400, 512),
  [FunctionProfile.L]: preset(400, 512, 800, 1024),
  [FunctionProfile.XL]: preset(800, 1024, 1600, 2048),
};

/** Upstream 1.11.1's build Job presets. */
export const DEFAULT_BUILD_PRESETS: { readonly [P in BuildProfile]: ResourcePreset } = {
  [BuildProfile.LOCAL_DEV]: preset(200, 200, 400, 400),
  [BuildProfile.SLOW]: preset(200, 200, 700, 700),
  [BuildProfile.NORMAL]: preset(500, 700, 1100, 1100),
  [BuildProfile.FAST]: preset(900, 1100, 1700, 1100),
};

/**
 * The problems of a preset: requests above limits, or requests below the minimum the
 * controller accepts for that kind of container.
 *
 * @param what how to name the preset in messages, such as `functionPresets.XS`
 * @param preset the preset
 * @param minimum the smallest acceptable requests
 * @returns one message per problem; empty when the preset is fine
 */
export function presetProblems(what: string, preset: ResourcePreset, minimum: MinimumRequest): string[] {
  const problems: string[] = [];
  if (cpuMillis(preset.requestCpu) > cpuMillis(preset.limitCpu)) {
    problems.push(`'${what}.requestCpu' (${preset.requestCpu.amount}) must be less than or equal to 'limitCpu' (${preset.limitCpu.amount})`);
  }
  if (sizeBytes(preset.requestMemory) > sizeBytes(preset.limitMemory)) {
    problems.push(`'${what}.requestMemory' (${preset.requestMemory.asString()}) must be less than or equal to 'limitMemory' (${preset.limitMemory.asString()})`);
  }
  if (cpuMillis(preset.requestCpu) < Math.round(parseQuantity(minimum.cpu)! * 1000)) {
    problems.push(`'${what}.requestCpu' (${preset.requestCpu.amount}) must be at least ${minimum.cpu}`);
  }
  if (sizeBytes(preset.requestMemory) < parseQuantity(minimum.memory)!) {
    problems.push(`'${what}.requestMemory' (${preset.requestMemory.asString()}) must be at least ${minimum.memory}`);
  }
  return problems;
}
