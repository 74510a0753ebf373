/**
 * Environments: one app, several clusters, each with typed settings and its own output folder.
 */
import * as path from 'node:path';
import { isDns1123Label } from '../api';
import { FunctionNamespaceQuota } from '../namespace/function-namespace';
import { ServerlessStackProps } from '../stack/serverless-stack';

/**
 * The settings of one environment (a cluster, or a group of alike clusters). Constructs take
 * these values as props; they never test which environment they are in.
 */
export interface GitOpsEnvironment {
  /**
   * Name of the environment, and of its output folder under the app's output folder. The
   * empty name writes to the output folder itself.
   */
  readonly name: string;

  /**
   * Props of the environment's ServerlessStack: presets, registry, controller replicas and so on.
   *
   * @default - ServerlessStack's defaults
   */
  readonly stack?: ServerlessStackProps;

  /**
   * A ResourceQuota for every Function namespace of the environment.
   *
   * @default - no ResourceQuota
   */
  readonly functionNamespaceQuota?: FunctionNamespaceQuota;
}

/**
 * The output folder of an environment.
 *
 * @param root the app's output folder, such as `dist`
 * @param environment the environment
 */
export function environmentOutdir(root: string, environment: GitOpsEnvironment): string {
  if (environment.name !== '' && !isDns1123Label(environment.name)) {
    throw new Error(`environment name '${environment.name}' must be lower-case letters, digits and '-': it names a folder`);
  }
  return path.join(root, environment.name);
}
