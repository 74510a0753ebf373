/**
 * Scaling a Function with KEDA: triggers, and the `ScaledObject` (`keda.sh/v1alpha1`) that scales
 * the Function through its scale subresource, down to zero Pods while no trigger is active.
 */
import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import type { IScaledObject, ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api/function-schema';
import { showJson } from '../api/_json';
import { declaredProblems } from './_declared';

/** Options of {@link KedaTrigger.prometheus}. */
export interface PrometheusTriggerOptions {
  /** The Prometheus server, such as `http://prometheus.monitoring.svc.cluster.local:9090`. */
  readonly serverAddress: string;
  /**
   * A PromQL query that returns one number, such as
   * `sum(rate(istio_requests_total{destination_workload="orders"}[2m]))`.
   */
  readonly query: string;
  /**
   * The value of the query one Pod takes: KEDA runs as many Pods as the query's value divided by
   * it, and wakes the Function from zero once the value is above 0.
   */
  readonly threshold: number;
}

/** Options of {@link KedaTrigger.cron}. */
export interface CronTriggerOptions {
  /** An IANA time zone, such as `Europe/Berlin` or `UTC`. */
  readonly timezone: string;
  /** When the period starts: a cron expression of five fields, such as `0 8 * * 1-5`. */
  readonly start: string;
  /** When the period ends: a cron expression of five fields, such as `0 18 * * 1-5`. */
  readonly end: string;
  /** How many Pods run during the period. */
  readonly desiredReplicas: number;
}

/** Options of {@link KedaTrigger.cpu}. */
export interface CpuTriggerOptions {
  /**
   * The average CPU use of the Function's Pods that KEDA keeps them at, in percent of their CPU
   * request (1 to 100).
   */
  readonly utilization: number;
}

const isBlank = (value: unknown) => typeof value !== 'string' || value.trim() === '';
/** A whole number from min to max (by default, the largest int32 of the API). */
const isWhole = (value: unknown, min: number, max = 2 ** 31 - 1) =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

/** A cron expression as KEDA's cron scaler parses it: five fields, or a descriptor such as `@daily`. */
function cronProblem(value: string): string | undefined {
  if (/^@(yearly|annually|monthly|weekly|daily|midnight|hourly)$/.test(value.trim()) || /^@every \S+$/.test(value.trim())) return undefined;
  const fields = value.trim().split(/\s+/);
  if (fields.length !== 5) return `has ${fields.length} field${fields.length === 1 ? '' : 's'}: give five (minute hour day-of-month month day-of-week), such as 0 8 * * 1-5`;
  const bad = fields.find(f => !/^[0-9A-Za-z*?,/-]+$/.test(f));
  return bad === undefined ? undefined : `'${bad}' is no cron field: use digits, names, *, ranges (1-5), lists (1,3) and steps (*/15)`;
}

/** Whether the runtime knows a time zone (Node.js has the IANA database, as KEDA's Go does). */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a trigger scales on the resource use of the Function's Pods (`cpu`, `memory`): those need
 * requests of that resource, and give no signal while no Pod runs.
 *
 * @internal
 */
export function usesPodResources(trigger: KedaTrigger): boolean {
  return trigger.type === 'cpu' || trigger.type === 'memory';
}

/** `'key'` of a required option that is missing or blank. */
const missing = (key: string, trigger: string) => `'${key}' is required for a ${trigger} trigger`;

/**
 * What makes KEDA scale a Function: a scaler of KEDA and its settings. An open set: the factories
 * cover the scalers most Functions use, and {@link KedaTrigger.of} any other scaler KEDA has.
 *
 * @example
 * KedaTrigger.cron({ timezone: 'Europe/Berlin', start: '0 8 * * 1-5', end: '0 18 * * 1-5', desiredReplicas: 2 })
 * @see https://keda.sh/docs/latest/scalers/
 */
export class KedaTrigger {
  /**
   * Scales on the value of a Prometheus query: as many Pods as the value divided by `threshold`,
   * none while the value is 0.
   *
   * @see https://keda.sh/docs/latest/scalers/prometheus/
   */
  public static prometheus(options: PrometheusTriggerOptions): KedaTrigger {
    const { serverAddress, query, threshold } = options;
    const metadata = { serverAddress, query, threshold: threshold === undefined ? undefined : String(threshold) };
    return new KedaTrigger('prometheus', metadata, undefined, () => {
      const problems: string[] = [];
      if (isBlank(serverAddress)) {
        problems.push(missing('serverAddress', 'prometheus'));
      } else if (!/^https?:\/\/[^/\s]+/.test(serverAddress)) {
        problems.push(`'serverAddress' (${showJson(serverAddress)}) must be an http:// or https:// URL, such as http://prometheus.monitoring.svc.cluster.local:9090`);
      }
      if (isBlank(query)) problems.push(missing('query', 'prometheus'));
      if (threshold === undefined) {
        problems.push(missing('threshold', 'prometheus'));
      } else if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold <= 0) {
        problems.push(`'threshold' (${showJson(threshold)}) must be a number above 0: the value of the query one Pod takes`);
      }
      return problems;
    });
  }

  /**
   * Runs `desiredReplicas` Pods between `start` and `end` (cron expressions in `timezone`), and
   * none outside that period unless another trigger is active.
   *
   * @see https://keda.sh/docs/latest/scalers/cron/
   */
  public static cron(options: CronTriggerOptions): KedaTrigger {
    const { timezone, start, end, desiredReplicas } = options;
    const metadata = { timezone, start, end, desiredReplicas: desiredReplicas === undefined ? undefined : String(desiredReplicas) };
    return new KedaTrigger('cron', metadata, undefined, () => {
      const problems: string[] = [];
      if (isBlank(timezone)) {
        problems.push(missing('timezone', 'cron'));
      } else if (!isTimeZone(timezone)) {
        problems.push(`'timezone' (${showJson(timezone)}) is not an IANA time zone: give one such as Europe/Berlin, America/New_York or UTC`);
      }
      for (const [key, value] of [['start', start], ['end', end]] as const) {
        if (isBlank(value)) {
          problems.push(missing(key, 'cron'));
        } else {
          const problem = cronProblem(value);
          if (problem) problems.push(`'${key}' (${showJson(value)}) ${problem}`);
        }
      }
      if (!isBlank(start) && start.trim() === end?.trim()) problems.push(`'end' (${showJson(end)}) is the same as start: the period would be empty`);
      if (desiredReplicas === undefined) {
        problems.push(missing('desiredReplicas', 'cron'));
      } else if (!isWhole(desiredReplicas, 1)) {
        problems.push(`'desiredReplicas' (${showJson(desiredReplicas)}) must be a whole number of at least 1`);
      }
      return problems;
    });
  }

  /**
   * Keeps the average CPU use of the Function's Pods at `utilization` percent of their CPU request,
   * as the built-in autoscaler does. The Pods need a CPU request (the presets have one), and CPU
   * use cannot wake a Function that has no Pods: alone, this trigger never scales to zero.
   *
   * @see https://keda.sh/docs/latest/scalers/cpu/
   */
  public static cpu(options: CpuTriggerOptions): KedaTrigger {
    const { utilization } = options;
    return new KedaTrigger('cpu', { value: utilization === undefined ? undefined : String(utilization) }, 'Utilization', () => {
      if (utilization === undefined) return [missing('utilization', 'cpu')];
      return isWhole(utilization, 1, 100) ? [] : [`'utilization' (${showJson(utilization)}) must be a whole percentage from 1 to 100`];
    });
  }

  /**
   * Any scaler of KEDA, by its type and its settings, as KEDA's documentation lists them.
   *
   * @param type the scaler, such as `rabbitmq` or `kafka`
   * @param metadata its settings, as strings
   * @example
   * KedaTrigger.of('rabbitmq', { queueName: 'orders', mode: 'QueueLength', value: '20', hostFromEnv: 'RABBITMQ_URL' })
   * @see https://keda.sh/docs/latest/scalers/
   */
  public static of(type: string, metadata: { [key: string]: string }): KedaTrigger {
    return new KedaTrigger(type, { ...metadata }, undefined, () => {
      const problems: string[] = [];
      if (isBlank(type)) problems.push(`'type' (${showJson(type)}) must name a scaler of KEDA, such as rabbitmq or kafka`);
      for (const [key, value] of Object.entries(metadata ?? {})) {
        if (typeof value !== 'string') problems.push(`'metadata.${key}' (${showJson(value)}) must be a string, as KEDA takes every setting`);
      }
      return problems;
    });
  }

  /** The scaler's settings, as KEDA takes them: strings. */
  public readonly metadata: { readonly [key: string]: string };

  private constructor(
    /** The scaler, such as `prometheus` or `cron`. */
    public readonly type: string,
    metadata: { readonly [key: string]: string | undefined },
    /** The metric type of a CPU trigger: `Utilization`. */
    public readonly metricType: string | undefined,
    private readonly check: () => string[],
  ) {
    // Options left out (in JavaScript) are problems, reported at synth; they are no settings.
    this.metadata = Object.fromEntries(Object.entries(metadata ?? {}).filter((e): e is [string, string] => e[1] !== undefined));
  }

  /**
   * The problems of the trigger's options, each starting with the option in quotes.
   *
   * @internal
   */
  public _problems(): string[] {
    return this.check();
  }

  /**
   * The trigger as an entry of the ScaledObject's `spec.triggers`.
   *
   * @internal
   */
  public _toKube(): IScaledObject['spec']['triggers'][number] {
    return { type: this.type, ...(this.metricType ? { metricType: this.metricType } : {}), metadata: { ...this.metadata } };
  }
}

/** How KEDA scales a Function: the `keda` prop of KymaFunction. */
export interface KedaScaleOptions {
  /**
   * The fewest Pods: 0 lets KEDA stop every Pod while no trigger is active.
   *
   * @default 0, or 1 when every trigger is a CPU trigger (which cannot scale to zero)
   * @see https://keda.sh/docs/latest/reference/scaledobject-spec/#minreplicacount
   */
  readonly minReplicas?: number;
  /**
   * The most Pods.
   *
   * @see https://keda.sh/docs/latest/reference/scaledobject-spec/#maxreplicacount
   */
  readonly maxReplicas: number;
  /** What makes KEDA scale: at least one trigger. It runs the most Pods any of them asks for. */
  readonly triggers: KedaTrigger[];
  /**
   * How long KEDA waits after the last trigger went inactive before it scales to zero.
   *
   * @default Duration.minutes(5)
   * @see https://keda.sh/docs/latest/reference/scaledobject-spec/#cooldownperiod
   */
  readonly cooldownPeriod?: Duration;
  /**
   * How often KEDA checks the triggers.
   *
   * @default Duration.seconds(30)
   * @see https://keda.sh/docs/latest/reference/scaledobject-spec/#pollinginterval
   */
  readonly pollingInterval?: Duration;
}

/** Props of {@link FunctionScaledObject}. */
export interface FunctionScaledObjectProps extends KedaScaleOptions {
  /** The Function it scales. */
  readonly functionName: string;
  /** The Function's namespace, which the ScaledObject must share. */
  readonly namespace: string;
  /**
   * The ScaledObject's name.
   *
   * @default - the Function's name
   */
  readonly name?: string;
  /**
   * Labels of the ScaledObject.
   *
   * @default - none
   */
  readonly labels?: { readonly [key: string]: string };
}

/** KEDA names the HPA of a ScaledObject `keda-hpa-<name>`, and labels objects with it: a label value, of at most 63 characters. */
const KEDA_HPA_PREFIX = 'keda-hpa-';
const MAX_LABEL_VALUE = 63;

/** Whole seconds of a duration, or the problem with it. */
function seconds(duration: Duration | undefined, key: string, min: number): number | string | undefined {
  if (duration === undefined) return undefined;
  const value = duration.toSeconds({ integral: false });
  if (!Number.isInteger(value) || value < min) {
    return `'${key}' (${duration.toHumanString()}) must be a whole number of seconds, at least ${min}`;
  }
  return value;
}

/** The KEDA model, loaded on first use: apps without KEDA do not pay for it at synth. */
function scaledObjectModel(): typeof ScaledObject {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject') as typeof import('@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject')).ScaledObject;
}

/**
 * A KEDA `ScaledObject` (`keda.sh/v1alpha1`) that scales a Function through its scale subresource
 * (`spec.replicas`), from `minReplicas` (0: no Pods while no trigger is active) to `maxReplicas`.
 * Create it with the `keda` prop of KymaFunction. Its options are checked at synth, each problem
 * naming the option, and the object against KEDA's schema.
 *
 * The Function must have no `scaleConfig`: KEDA refuses to scale a target another
 * HorizontalPodAutoscaler scales, such as the one the Function Controller creates for it.
 *
 * @see https://keda.sh/docs/latest/reference/scaledobject-spec/
 */
export class FunctionScaledObject extends Construct {
  /** The ScaledObject's name. */
  public readonly name: string;
  /** The fewest Pods. */
  public readonly minReplicas: number;
  /** The most Pods. */
  public readonly maxReplicas: number;
  /** The ScaledObject. */
  public readonly apiObject: ApiObject;

  private readonly problems: string[] = [];

  constructor(scope: Construct, id: string, props: FunctionScaledObjectProps) {
    super(scope, id);
    this.name = props.name ?? props.functionName;
    const triggers = props.triggers ?? [];
    const podResourcesOnly = triggers.length > 0 && triggers.every(usesPodResources);
    this.minReplicas = props.minReplicas ?? (podResourcesOnly ? 1 : 0);
    this.maxReplicas = props.maxReplicas;

    if (!isWhole(this.minReplicas, 0)) this.problems.push(`'minReplicas' (${showJson(this.minReplicas)}) must be a whole number of at least 0`);
    if (this.maxReplicas === undefined) this.problems.push('\'maxReplicas\' is required: the most Pods KEDA runs');
    else if (!isWhole(this.maxReplicas, 1)) this.problems.push(`'maxReplicas' (${showJson(this.maxReplicas)}) must be a whole number of at least 1`);
    if (typeof this.minReplicas === 'number' && typeof this.maxReplicas === 'number' && this.minReplicas > this.maxReplicas) {
      this.problems.push(`'maxReplicas' (${this.maxReplicas}) is below minReplicas (${this.minReplicas}): raise it, or lower minReplicas`);
    }
    if (!triggers.length) {
      this.problems.push('\'triggers\' is empty: give at least one, such as KedaTrigger.prometheus(...), KedaTrigger.cron(...) or KedaTrigger.cpu(...)');
    }
    triggers.forEach((trigger, i) => {
      for (const problem of trigger._problems()) this.problems.push(problem.replace(/^'/, `'triggers[${i}].`));
    });
    if (podResourcesOnly && this.minReplicas === 0) {
      this.problems.push(`'minReplicas' (0): a ${triggers[0].type} trigger cannot scale to zero on its own, since Pods that do not run use no `
        + `${triggers[0].type === 'cpu' ? 'CPU' : 'memory'} to wake the Function with; give minReplicas of at least 1, or add a trigger of another type, such as KedaTrigger.prometheus(...)`);
    }
    const pollingInterval = seconds(props.pollingInterval ?? Duration.seconds(30), 'pollingInterval', 1);
    const cooldownPeriod = seconds(props.cooldownPeriod ?? Duration.minutes(5), 'cooldownPeriod', 0);
    for (const value of [pollingInterval, cooldownPeriod]) if (typeof value === 'string') this.problems.push(value);

    const ScaledObjectModel = scaledObjectModel();
    const spec: IScaledObject['spec'] = {
      scaleTargetRef: { apiVersion: FUNCTION_API_VERSION, kind: FUNCTION_KIND, name: props.functionName },
      minReplicaCount: this.minReplicas,
      maxReplicaCount: this.maxReplicas,
      ...(typeof pollingInterval === 'number' ? { pollingInterval } : {}),
      ...(typeof cooldownPeriod === 'number' ? { cooldownPeriod } : {}),
      advanced: {
        // Once the ScaledObject is gone (keda removed), the Function gets back the replicas it had
        // before KEDA rather than staying at 0: Argo CD ignores `spec.replicas` of Functions as drift.
        restoreToOriginalReplicaCount: true,
        // KEDA names its HPA keda-hpa-<name>, a label value: a longer name takes the Function's (unique in the namespace).
        ...(KEDA_HPA_PREFIX.length + this.name.length > MAX_LABEL_VALUE ? { horizontalPodAutoscalerConfig: { name: this.name } } : {}),
      },
      triggers: triggers.map(t => t._toKube()),
    };
    this.apiObject = new ApiObject(this, 'Resource', new ScaledObjectModel({
      metadata: { name: this.name, namespace: props.namespace, labels: { ...props.labels } },
      spec,
    }).toJSON());
    this.node.addValidation({ validate: () => declaredProblems(this, this.problems.length ? this.problems : this.modelProblems(ScaledObjectModel)) });
  }

  /** The object against KEDA's schema. */
  private modelProblems(Model: typeof ScaledObject): string[] {
    try {
      new Model(this.apiObject.toJson()).validate();
      return [];
    } catch (e) {
      return [`ScaledObject ${this.name} is invalid: ${(e as Error).message}`];
    }
  }
}
