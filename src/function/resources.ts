/**
 * Resources of a Function's Pods and of its build Job: a preset of the stack, or explicit
 * requests and limits.
 */
import { ContainerResources } from 'cdk8s-plus-27';
import { BuildProfile, FunctionProfile } from '../api/profiles';

/** The `resourceConfiguration.function` or `.build` block a resources choice renders. */
export interface ResourceConfiguration {
  /** The preset's name. */
  readonly profile?: string;
  /** Explicit requests and limits, as quantities. */
  readonly resources?: ResourceQuantities;
}

/** Requests and limits of a container, as quantities by resource name (`cpu`, `memory`, `ephemeral-storage`). */
export interface ResourceQuantities {
  /**
   * What the container is guaranteed.
   *
   * @default - none
   */
  readonly requests?: { readonly [resource: string]: string };
  /**
   * What the container may use at most.
   *
   * @default - none
   */
  readonly limits?: { readonly [resource: string]: string };
}

function explicit(resources: ContainerResources, prop: string): ResourceConfiguration {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (resources.cpu?.request) requests.cpu = resources.cpu.request.amount;
  if (resources.cpu?.limit) limits.cpu = resources.cpu.limit.amount;
  if (resources.memory?.request) requests.memory = resources.memory.request.asString();
  if (resources.memory?.limit) limits.memory = resources.memory.limit.asString();
  if (resources.ephemeralStorage?.request) requests['ephemeral-storage'] = resources.ephemeralStorage.request.asString();
  if (resources.ephemeralStorage?.limit) limits['ephemeral-storage'] = resources.ephemeralStorage.limit.asString();
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) {
    throw new Error(`${prop}.custom() sets no request or limit: give at least one, or use ${prop}.preset()`);
  }
  return {
    resources: {
      ...(Object.keys(requests).length ? { requests } : {}),
      ...(Object.keys(limits).length ? { limits } : {}),
    },
  };
}

/**
 * Resources of a Function's Pods (`spec.resourceConfiguration.function`).
 *
 * @example
 * FunctionResources.preset(FunctionProfile.M)
 * FunctionResources.custom({ cpu: { request: Cpu.millis(100), limit: Cpu.millis(500) }, memory: { request: Size.mebibytes(128), limit: Size.mebibytes(256) } })
 * @see https://kyma-project.io/#/serverless-manager/user/resources/06-10-function-cr
 */
export class FunctionResources {
  /**
   * One of the stack's Function presets.
   *
   * @param profile the preset
   */
  public static preset(profile: FunctionProfile): FunctionResources {
    return new FunctionResources({ profile });
  }

  /**
   * Explicit requests and limits. The Function Controller accepts no less than 10m CPU and
   * 16Mi memory, and requests must not exceed limits.
   *
   * @param resources requests and limits, as for any cdk8s-plus container
   * @throws when it sets no request or limit at all
   */
  public static custom(resources: ContainerResources): FunctionResources {
    return new FunctionResources(explicit(resources, 'FunctionResources'));
  }

  private constructor(
    /** The block rendered into `spec.resourceConfiguration.function`. */
    public readonly config: ResourceConfiguration,
  ) {}
}

/**
 * Resources of the build Job that turns a Function's source into an image
 * (`spec.resourceConfiguration.build`).
 *
 * @example
 * BuildResources.preset(BuildProfile.FAST)
 * @see https://kyma-project.io/#/serverless-manager/user/resources/06-10-function-cr
 */
export class BuildResources {
  /**
   * One of the stack's build presets.
   *
   * @param profile the preset
   */
  public static preset(profile: BuildProfile): BuildResources {
    return new BuildResources({ profile });
  }

  /**
   * Explicit requests and limits. The Function Controller accepts no less than 200m CPU and
   * 200Mi memory for a build, and requests must not exceed limits.
   *
   * @param resources requests and limits, as for any cdk8s-plus container
   * @throws when it sets no request or limit at all
   */
  public static custom(resources: ContainerResources): BuildResources {
    return new BuildResources(explicit(resources, 'BuildResources'));
  }

  private constructor(
    /** The block rendered into `spec.resourceConfiguration.build`. */
    public readonly config: ResourceConfiguration,
  ) {}
}
