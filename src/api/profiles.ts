/**
 * Resource profiles: the names of the presets a Function or its build Job can use, and the
 * smallest requests the controller accepts for explicit resources.
 *
 * The names are part of the Function API (the CRD's CEL rules accept only these). This module is
 * plain data, with no cdk8s at run time, so the webhook server can use it; the preset values,
 * which are stack configuration in cdk8s units, are in `presets.ts`.
 */

/** Presets of the Function's own Pods (`spec.resourceConfiguration.function.profile`). */
export enum FunctionProfile {
  XS = 'XS',
  S = 'S',
  M = 'M',
  L = 'L',
  XL = 'XL',
}

/** Presets of the build Job's Pod (`spec.resourceConfiguration.build.profile`). */
export enum BuildProfile {
  LOCAL_DEV = 'local-dev',
  SLOW = 'slow',
  NORMAL = 'normal',
  FAST = 'fast',
}

/** The Function profile names in the CRD's order. */
export const FUNCTION_PROFILES: readonly string[] = [
  FunctionProfile.XS, FunctionProfile.S, FunctionProfile.M, FunctionProfile.L, FunctionProfile.XL,
];

/** The build profile names in the CRD's order. */
export const BUILD_PROFILES: readonly string[] = [
  BuildProfile.LOCAL_DEV, BuildProfile.SLOW, BuildProfile.NORMAL, BuildProfile.FAST,
];

/** The smallest requests (and limits) a container may ask for, as Kubernetes quantities. */
export interface MinimumRequest {
  /** The smallest CPU amount, such as `10m`. */
  readonly cpu: string;
  /** The smallest memory amount, such as `16Mi`. */
  readonly memory: string;
}

/** The smallest request the controller should accept for a Function container. */
export const FUNCTION_MIN_REQUEST: MinimumRequest = { cpu: '10m', memory: '16Mi' };

/** The smallest request the controller should accept for a build Job container. */
export const BUILD_MIN_REQUEST: MinimumRequest = { cpu: '200m', memory: '200Mi' };
