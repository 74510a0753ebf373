/**
 * The status side of the Function API: the conditions and reasons the 1.11.1 controller writes,
 * and the labels it puts on the objects it creates for a Function. `kyma-serverless status`
 * reads Functions by them; health checks for GitOps tools name the same conditions.
 */
import { DEFAULT_RELEASE, ServerlessRelease, releaseFacts } from './release';

/** The condition types of a Function's status (1.11.1 `function_types.go`). */
export enum FunctionConditionType {
  /** The spec is valid and the sources are in place (inline ConfigMap, or Git sources fetched). */
  CONFIGURATION_READY = 'ConfigurationReady',
  /** The image is built: the build Job succeeded. */
  BUILD_READY = 'BuildReady',
  /** The Deployment, Service (and HPA) exist and the Deployment is ready. */
  RUNNING = 'Running',
}

/** What a release's controller writes into a Function's status once the Function runs. */
export interface FunctionReadiness {
  /** The condition types that are all True then, in the order the controller sets them. */
  readonly conditions: readonly FunctionConditionType[];
  /**
   * Whether the controller records the generation it has processed in `status.observedGeneration`
   * (1.13.0 does, before it judges the Deployment; 1.11.1 never does, so a generation it has not
   * processed yet cannot be told from its status).
   */
  readonly observedGeneration: boolean;
}

/**
 * The conditions a release's controller sets True once a Function runs: `ConfigurationReady`,
 * `BuildReady` and `Running` where it builds images (1.11.1); `ConfigurationReady` and `Running`
 * where it does not (1.13.0, which also writes `status.observedGeneration`).
 *
 * @param release the release of the controller
 */
export function functionReadiness(release: ServerlessRelease = DEFAULT_RELEASE): FunctionReadiness {
  const builds = releaseFacts(release).buildsImages;
  return {
    conditions: builds
      ? [FunctionConditionType.CONFIGURATION_READY, FunctionConditionType.BUILD_READY, FunctionConditionType.RUNNING]
      : [FunctionConditionType.CONFIGURATION_READY, FunctionConditionType.RUNNING],
    observedGeneration: !builds,
  };
}

/** The values of a condition's `status`. */
export enum ConditionStatus {
  TRUE = 'True',
  FALSE = 'False',
  UNKNOWN = 'Unknown',
}

/**
 * The reasons the 1.11.1 controller writes into a Function's conditions.
 *
 * @see https://github.com/kyma-project/serverless/blob/1.11.1/components/serverless/pkg/apis/serverless/v1alpha2/function_types.go
 */
export enum FunctionConditionReason {
  /** ConfigurationReady False: the controller's validation failed (or True: "Function configured"). */
  INVALID_FUNCTION_SPEC = 'InvalidFunctionSpec',
  CONFIG_MAP_CREATED = 'ConfigMapCreated',
  CONFIG_MAP_UPDATED = 'ConfigMapUpdated',
  /** Git sources fetched. */
  SOURCE_UPDATED = 'SourceUpdated',
  /** ConfigurationReady False: the Git sources could not be fetched. */
  SOURCE_UPDATE_FAILED = 'SourceUpdateFailed',
  JOB_CREATED = 'JobCreated',
  JOB_UPDATED = 'JobUpdated',
  JOB_RUNNING = 'JobRunning',
  JOBS_DELETED = 'JobsDeleted',
  JOB_FINISHED = 'JobFinished',
  /** BuildReady False: the build Job failed; the controller runs it again after 5 minutes. */
  JOB_FAILED = 'JobFailed',
  DEPLOYMENT_CREATED = 'DeploymentCreated',
  DEPLOYMENT_UPDATED = 'DeploymentUpdated',
  /** Running False: the Deployment failed to roll out, or the API server refused it. */
  DEPLOYMENT_FAILED = 'DeploymentFailed',
  DEPLOYMENT_WAITING = 'DeploymentWaiting',
  DEPLOYMENT_READY = 'DeploymentReady',
  SERVICE_CREATED = 'ServiceCreated',
  SERVICE_UPDATED = 'ServiceUpdated',
  /** Running False: the Service could not be created or updated. */
  SERVICE_FAILED = 'ServiceFailed',
  HORIZONTAL_POD_AUTOSCALER_CREATED = 'HorizontalPodAutoscalerCreated',
  HORIZONTAL_POD_AUTOSCALER_UPDATED = 'HorizontalPodAutoscalerUpdated',
  MIN_REPLICAS_NOT_AVAILABLE = 'MinReplicasNotAvailable',
}

/** The labels the controller puts on every object it creates for a Function. */
export enum FunctionChildLabel {
  /** The Function's name. */
  FUNCTION_NAME = 'serverless.kyma-project.io/function-name',
  /** `function-controller`. */
  MANAGED_BY = 'serverless.kyma-project.io/managed-by',
  /** The Function's `metadata.uid`: tells a re-created Function's objects from its predecessor's. */
  UUID = 'serverless.kyma-project.io/uuid',
}

/** The value of {@link FunctionChildLabel.MANAGED_BY} on the controller's objects. */
export const FUNCTION_CONTROLLER = 'function-controller';
