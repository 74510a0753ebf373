/**
 * What a container of the stack may use: a type of the public API, which the stack's and the
 * Functions' props take.
 */
import { Size } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';

/** Requests and limits of a container. */
export interface ContainerResources {
  /** CPU the container is guaranteed. */
  readonly requestCpu: Cpu;
  /** Memory the container is guaranteed. */
  readonly requestMemory: Size;
  /** The most CPU the container may use. */
  readonly limitCpu: Cpu;
  /** The most memory the container may use. */
  readonly limitMemory: Size;
}
