/**
 * Our admission webhook in the cluster: the Deployment that runs the server (from a ConfigMap on
 * the official Node.js image, or a prebuilt image), its Service, the two webhook configurations,
 * the certificate plumbing and least-privilege RBAC.
 */
import { createHash } from 'node:crypto';
import { ApiObject, Duration, Size, SizeRoundingBehavior } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type * as certManager from '@kubernetes-models/cert-manager/cert-manager.io/v1';
import type { FunctionDefaults } from '../api/function-defaults';
import { FUNCTION_GROUP, FUNCTION_VERSION } from '../api/function-schema';
import { DEFAULT_RELEASE, ServerlessRelease } from '../api/release';
import {
  SelfManagedTlsConfig, WEBHOOK_METRICS_PORT, WEBHOOK_NAMES, WEBHOOK_PATHS, WEBHOOK_PORT, WebhookConfig, renderWebhookConfig, serviceDnsNames,
} from '../webhook/config';
import { LogLevel } from '../log-level';
import { WEBHOOK_PROGRAM_BUNDLE, WEBHOOK_PROGRAM_LOADER, WEBHOOK_PROGRAM_MAIN, webhookProgram } from './_webhook-program';
import { clusterScoped, requireInteger, resourceRequirements, restrictedContainer, restrictedPod } from './_util';
import { ContainerResources } from './container-resources';

/** The Deployment selector: upstream's webhook labels. */
export const WEBHOOK_SELECTOR = {
  'app': 'serverless-webhook',
  'app.kubernetes.io/name': 'serverless-webhook',
  'app.kubernetes.io/instance': 'serverless',
  'role': 'webhook',
} as const;

/** Where the Deployment mounts the configuration file. */
export const WEBHOOK_CONFIG_DIR = '/etc/kyma-serverless-webhook';

/** Where the Deployment mounts the server's program (unless it runs a prebuilt image). */
export const WEBHOOK_PROGRAM_DIR = '/opt/kyma-serverless-webhook';

/** The user the server runs as (distroless `nonroot` in the prebuilt image). */
const WEBHOOK_UID = 65532;

/** Kinds of cert-manager issuers. */
export enum CertManagerIssuerKind {
  /** An Issuer in the stack's namespace. */
  ISSUER = 'Issuer',
  /** A cluster-wide ClusterIssuer. */
  CLUSTER_ISSUER = 'ClusterIssuer',
}

/** An existing cert-manager issuer. */
export interface CertManagerIssuer {
  /** Its name. */
  readonly name: string;
  /**
   * Its kind.
   *
   * @default CertManagerIssuerKind.ISSUER
   */
  readonly kind?: CertManagerIssuerKind;
}

/** Options of {@link WebhookCertificates.selfManaged}. */
export interface SelfManagedCertificatesOptions {
  /**
   * Renew the serving certificate (valid one year) this long before it expires.
   *
   * @default Duration.days(30)
   */
  readonly renewBefore?: Duration;
  /**
   * How often each replica re-checks the Secret and both `caBundle`s.
   *
   * @default Duration.minutes(5)
   */
  readonly checkInterval?: Duration;
}

/** Options of {@link WebhookCertificates.certManager}. */
export interface CertManagerCertificatesOptions {
  /**
   * The issuer that signs the serving certificate.
   *
   * @default - a self-signed Issuer created in the stack's namespace
   */
  readonly issuer?: CertManagerIssuer;
  /**
   * Renew the certificate this long before it expires.
   *
   * @default Duration.days(30)
   */
  readonly renewBefore?: Duration;
}

/** What a certificate mode adds to the webhook. @internal */
export interface CertificateBinding {
  readonly selfManagedTls?: SelfManagedTlsConfig;
  readonly args: string[];
  readonly volumes: k8s.Volume[];
  readonly volumeMounts: k8s.VolumeMount[];
  readonly configurationAnnotations: { [key: string]: string };
  /** Whether the server talks to the Kubernetes API. */
  readonly usesApi: boolean;
}

/** How the webhook gets its serving certificate. */
export abstract class WebhookCertificates {
  /**
   * The webhook manages its own certificates: at start-up it creates a CA and a serving
   * certificate in the Secret `serverless-webhook` when missing, renews them before they
   * expire, and writes the CA into both webhook configurations' `caBundle`. Nothing else is needed.
   */
  public static selfManaged(options: SelfManagedCertificatesOptions = {}): WebhookCertificates {
    return new SelfManaged(options);
  }

  /**
   * cert-manager issues and renews the certificate (a `Certificate` in the stack's namespace),
   * and its CA injector writes the `caBundle`s (`cert-manager.io/inject-ca-from`). The webhook
   * reloads the mounted files when they change. cert-manager must be installed.
   *
   * @see https://cert-manager.io/docs/concepts/ca-injector/
   */
  public static certManager(options: CertManagerCertificatesOptions = {}): WebhookCertificates {
    return new CertManager(options);
  }

  /** @internal */
  public abstract _bind(scope: Construct, namespace: string): CertificateBinding;
}

function wholeDays(prop: string, d: Duration): number {
  const days = d.toDays({ integral: false });
  requireInteger(prop, days, 1);
  return days;
}

class SelfManaged extends WebhookCertificates {
  constructor(private readonly options: SelfManagedCertificatesOptions) {
    super();
  }

  public _bind(_scope: Construct, namespace: string): CertificateBinding {
    const renewBeforeDays = wholeDays('webhook.certificates.renewBefore (days)', this.options.renewBefore ?? Duration.days(30));
    if (renewBeforeDays >= 365) throw new Error(`'renewBefore' (${renewBeforeDays} days) must be shorter than the certificate's 365 days`);
    const checkIntervalSeconds = (this.options.checkInterval ?? Duration.minutes(5)).toSeconds();
    requireInteger('webhook.certificates.checkInterval (seconds)', checkIntervalSeconds, 10);
    return {
      selfManagedTls: {
        namespace,
        secretName: WEBHOOK_NAMES.secret,
        serviceName: WEBHOOK_NAMES.service,
        mutatingWebhookConfiguration: WEBHOOK_NAMES.mutating,
        validatingWebhookConfiguration: WEBHOOK_NAMES.validating,
        renewBeforeDays,
        checkIntervalSeconds,
      },
      args: [],
      volumes: [],
      volumeMounts: [],
      configurationAnnotations: {},
      usesApi: true,
    };
  }
}

class CertManager extends WebhookCertificates {
  constructor(private readonly options: CertManagerCertificatesOptions) {
    super();
  }

  public _bind(scope: Construct, namespace: string): CertificateBinding {
    // Loaded only here: stacks without cert-manager do not pay for its models at every synth.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Certificate, Issuer } = require('@kubernetes-models/cert-manager/cert-manager.io/v1') as typeof certManager;
    const renewBeforeHours = wholeDays('webhook.certificates.renewBefore (days)', this.options.renewBefore ?? Duration.days(30)) * 24;
    if (renewBeforeHours >= 365 * 24) throw new Error(`'renewBefore' (${renewBeforeHours / 24} days) must be shorter than the certificate's 365 days`);
    let issuer = this.options.issuer;
    if (!issuer) {
      const selfSigned = new Issuer({
        metadata: { name: `${WEBHOOK_NAMES.service}-selfsigned`, namespace },
        spec: { selfSigned: {} },
      });
      selfSigned.validate();
      new ApiObject(scope, 'Issuer', selfSigned.toJSON());
      issuer = { name: selfSigned.metadata!.name!, kind: CertManagerIssuerKind.ISSUER };
    }
    const secretName = `${WEBHOOK_NAMES.secret}-tls`;
    const service = WEBHOOK_NAMES.service;
    const certificate = new Certificate({
      metadata: { name: WEBHOOK_NAMES.service, namespace },
      spec: {
        secretName,
        commonName: `${service}.${namespace}.svc`,
        dnsNames: serviceDnsNames(service, namespace),
        duration: '8760h',
        renewBefore: `${renewBeforeHours}h`,
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
        usages: ['server auth', 'digital signature'],
        issuerRef: { group: 'cert-manager.io', kind: issuer.kind ?? CertManagerIssuerKind.ISSUER, name: issuer.name },
      },
    });
    certificate.validate();
    new ApiObject(scope, 'Certificate', certificate.toJSON());
    const dir = `${WEBHOOK_CONFIG_DIR}/tls`;
    return {
      args: ['--tls-cert', `${dir}/tls.crt`, '--tls-key', `${dir}/tls.key`],
      volumes: [{ name: 'tls', secret: { secretName } }],
      volumeMounts: [{ name: 'tls', mountPath: dir, readOnly: true }],
      configurationAnnotations: { 'cert-manager.io/inject-ca-from': `${namespace}/${WEBHOOK_NAMES.service}` },
      usesApi: false,
    };
  }
}

/** What the container runs: image, command and the program's volume. */
interface ServerLaunch {
  readonly image: string;
  readonly command?: string[];
  readonly args: string[];
  readonly volumes: k8s.Volume[];
  readonly volumeMounts: k8s.VolumeMount[];
  readonly annotations: { [key: string]: string };
}

/** Settings of the webhook that a stack exposes. */
export interface AdmissionWebhookOptions {
  /**
   * Run the webhook. Without it, only the CRD's schema and CEL rules check Functions at apply
   * time, as upstream 1.11.1 does, and the controller's checks surface later as a failed Function.
   *
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * Webhook replicas. With `failurePolicy: Fail`, no Function can be written while none is
   * ready, so keep at least 2.
   *
   * @default 2
   */
  readonly replicas?: number;

  /**
   * Where the serving certificate comes from.
   *
   * @default WebhookCertificates.selfManaged()
   */
  readonly certificates?: WebhookCertificates;

  /**
   * How long the API server waits for an answer (1 to 30 seconds); the server gives up on a
   * request a second earlier.
   *
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;

  /**
   * Requests and limits of the webhook container. The server's heap is capped at three quarters
   * of the memory limit (`NODE_OPTIONS=--max-old-space-size`).
   *
   * @default - 50m CPU / 96Mi requested, 500m / 256Mi limits
   */
  readonly resources?: ContainerResources;
}

/** Props of {@link AdmissionWebhook}. */
export interface AdmissionWebhookProps extends AdmissionWebhookOptions {
  /** The stack's namespace. */
  readonly namespace: string;
  /** The official Node.js image that runs the server from its ConfigMap. */
  readonly nodeImage: string;
  /**
   * A prebuilt image of the server (this package's Dockerfile), run instead.
   *
   * @default - none: the server runs from a ConfigMap on `nodeImage`
   */
  readonly image?: string;
  /** The stack's PriorityClass. */
  readonly priorityClassName: string;
  /** What defaulting fills in: the stack's default presets. */
  readonly defaults: FunctionDefaults;
  /**
   * The stack's release, whose rules the webhook defaults and validates Functions by.
   *
   * @default ServerlessRelease.V1_11_1
   */
  readonly release?: ServerlessRelease;
  /**
   * The lowest level the server logs.
   *
   * @default LogLevel.INFO
   */
  readonly logLevel?: LogLevel;
}

/**
 * The defaulting and validating admission webhook for Functions: `POST /defaulting/functions`
 * fills in the stack's defaults, `POST /validation/function` denies what breaks a rule of the
 * Function API, with the same messages as synth.
 *
 * By default the server is this package's webhook bundle in the ConfigMap `serverless-webhook-server`,
 * run with `node` on the official Node.js image; `image` runs a prebuilt image instead.
 */
export class AdmissionWebhook extends Construct {
  /** Webhook replicas. */
  public readonly replicas: number;
  /**
   * The configuration file the server reads.
   *
   * @jsii ignore
   */
  public readonly config: WebhookConfig;
  /** The Service in front of the webhook: 443 for the API server, `http-metrics` (8080) for Prometheus. */
  public readonly service: k8s.KubeService;
  /** How long the API server waits for an answer. */
  public readonly timeout: Duration;
  /** The release whose rules the webhook applies. */
  public readonly release: ServerlessRelease;

  constructor(scope: Construct, id: string, props: AdmissionWebhookProps) {
    super(scope, id);
    this.replicas = props.replicas ?? 2;
    requireInteger('webhook.replicas', this.replicas, 1);
    this.timeout = props.timeout ?? Duration.seconds(10);
    const timeoutSeconds = this.timeout.toSeconds();
    requireInteger('webhook.timeout (seconds)', timeoutSeconds, 2, 30);
    const { namespace } = props;
    const labels = { 'app.kubernetes.io/name': 'serverless-webhook', 'app.kubernetes.io/component': 'webhook' };

    const tls = (props.certificates ?? WebhookCertificates.selfManaged())._bind(this, namespace);
    this.release = props.release ?? DEFAULT_RELEASE;
    this.config = {
      defaults: props.defaults,
      requestTimeoutSeconds: timeoutSeconds - 1,
      shutdownDelaySeconds: 5,
      selfManagedTls: tls.selfManagedTls,
      // Written only for a release other than the default, so that the default stack's file stays as it was.
      ...(this.release !== DEFAULT_RELEASE ? { release: this.release } : {}),
    };
    const configText = renderWebhookConfig(this.config);

    const serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name: WEBHOOK_NAMES.workload, labels },
      automountServiceAccountToken: tls.usesApi,
    });
    if (tls.usesApi) this.grantCertificateAccess(serviceAccount, namespace, labels);

    const configMap = new k8s.KubeConfigMap(this, 'Config', {
      metadata: { name: WEBHOOK_NAMES.config, labels },
      data: { 'config.yaml': configText },
    });
    const serverArgs = [
      '--port', String(WEBHOOK_PORT),
      '--metrics-port', String(WEBHOOK_METRICS_PORT),
      '--config', `${WEBHOOK_CONFIG_DIR}/config.yaml`,
      '--log-level', props.logLevel ?? LogLevel.INFO,
      ...tls.args,
    ];
    const run = props.image ? this.prebuilt(props.image, serverArgs) : this.fromConfigMap(props.nodeImage, serverArgs, labels);

    const resources = props.resources ?? {
      requestCpu: Cpu.millis(50), requestMemory: Size.mebibytes(96), limitCpu: Cpu.millis(500), limitMemory: Size.mebibytes(256),
    };
    new k8s.KubeDeployment(this, 'Deployment', {
      metadata: { name: WEBHOOK_NAMES.workload, labels },
      spec: {
        replicas: this.replicas,
        selector: { matchLabels: { ...WEBHOOK_SELECTOR } },
        // One replica at a time, never below the current count: admission must not stop.
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: {
            labels: {
              ...WEBHOOK_SELECTOR,
              ...labels,
              'kyma-project.io/module': 'serverless',
              ...(tls.usesApi ? { 'networking.serverless.kyma-project.io/to-apiserver': 'allowed' } : {}),
            },
            annotations: {
              'sidecar.istio.io/inject': 'false',
              // A changed configuration or program rolls the Pods; the server reads both only at start-up.
              'checksum/config': createHash('sha256').update(configText).digest('hex'),
              ...run.annotations,
            },
          },
          spec: {
            serviceAccountName: serviceAccount.name,
            automountServiceAccountToken: tls.usesApi,
            priorityClassName: props.priorityClassName,
            terminationGracePeriodSeconds: 30,
            securityContext: restrictedPod(WEBHOOK_UID),
            topologySpreadConstraints: [
              { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { ...WEBHOOK_SELECTOR } } },
              { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { ...WEBHOOK_SELECTOR } } },
            ],
            containers: [{
              name: 'webhook',
              image: run.image,
              imagePullPolicy: 'IfNotPresent',
              command: run.command,
              args: run.args,
              ports: [
                { name: 'https-webhook', containerPort: WEBHOOK_PORT, protocol: 'TCP' },
                { name: 'http-metrics', containerPort: WEBHOOK_METRICS_PORT, protocol: 'TCP' },
              ],
              // Ready only through the HTTPS listener, so a broken certificate keeps the Pod out of the Service.
              readinessProbe: {
                httpGet: { path: '/readyz', port: k8s.IntOrString.fromNumber(WEBHOOK_PORT), scheme: 'HTTPS' },
                periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 2, successThreshold: 1,
              },
              livenessProbe: {
                httpGet: { path: '/healthz', port: k8s.IntOrString.fromNumber(WEBHOOK_METRICS_PORT), scheme: 'HTTP' },
                initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3, successThreshold: 1,
              },
              resources: resourceRequirements(resources),
              // The heap stops at three quarters of the memory limit: the garbage collector works
              // harder before the kernel would kill the Pod, and the rest is Node.js itself.
              env: [{ name: 'NODE_OPTIONS', value: `--max-old-space-size=${Math.floor(resources.limitMemory.toMebibytes({ rounding: SizeRoundingBehavior.FLOOR }) * 0.75)}` }],
              securityContext: restrictedContainer(),
              volumeMounts: [{ name: 'config', mountPath: WEBHOOK_CONFIG_DIR, readOnly: true }, ...run.volumeMounts, ...tls.volumeMounts],
            }],
            volumes: [{ name: 'config', configMap: { name: configMap.name } }, ...run.volumes, ...tls.volumes],
          },
        },
      },
    });

    new k8s.KubePodDisruptionBudget(this, 'DisruptionBudget', {
      metadata: { name: WEBHOOK_NAMES.workload, labels },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: { ...WEBHOOK_SELECTOR } } },
    });

    this.service = new k8s.KubeService(this, 'Service', {
      metadata: {
        name: WEBHOOK_NAMES.service,
        labels,
        annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(WEBHOOK_METRICS_PORT), 'prometheus.io/path': '/metrics' },
      },
      spec: {
        type: 'ClusterIP',
        selector: { ...WEBHOOK_SELECTOR },
        ports: [
          { name: 'https-webhook', port: 443, targetPort: k8s.IntOrString.fromNumber(WEBHOOK_PORT), protocol: 'TCP' },
          { name: 'http-metrics', port: WEBHOOK_METRICS_PORT, targetPort: k8s.IntOrString.fromNumber(WEBHOOK_METRICS_PORT), protocol: 'TCP' },
        ],
      },
    });

    const webhook = (name: string, path: string) => ({
      name,
      clientConfig: { service: { name: WEBHOOK_NAMES.service, namespace, path, port: 443 } },
      rules: [{
        apiGroups: [FUNCTION_GROUP],
        apiVersions: [FUNCTION_VERSION],
        operations: ['CREATE', 'UPDATE'],
        // Not functions/status: the controller's status writes must never wait on us.
        resources: ['functions'],
        scope: 'Namespaced',
      }],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      sideEffects: 'None',
      timeoutSeconds,
      admissionReviewVersions: ['v1'],
      namespaceSelector: {
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] },
          // Upstream's selector, for Gardener clusters that label the system namespace this way.
          { key: 'gardener.cloud/purpose', operator: 'NotIn', values: ['kube-system'] },
        ],
      },
    });
    const metadata = (name: string) => ({ name, labels, annotations: { ...tls.configurationAnnotations } });
    clusterScoped(new k8s.KubeMutatingWebhookConfiguration(this, 'Defaulting', {
      metadata: metadata(WEBHOOK_NAMES.mutating),
      webhooks: [{ ...webhook(WEBHOOK_NAMES.mutating, WEBHOOK_PATHS.defaulting), reinvocationPolicy: 'Never' }],
    }));
    clusterScoped(new k8s.KubeValidatingWebhookConfiguration(this, 'Validation', {
      metadata: metadata(WEBHOOK_NAMES.validating),
      webhooks: [webhook(WEBHOOK_NAMES.validating, WEBHOOK_PATHS.validation)],
    }));
  }

  /** How the container runs a prebuilt image: its entry point is `kyma-serverless`. */
  private prebuilt(image: string, serverArgs: string[]): ServerLaunch {
    return { image, args: ['webhook', 'serve', ...serverArgs], volumes: [], volumeMounts: [], annotations: {} };
  }

  /**
   * How the container runs the bundled server: the ConfigMap `serverless-webhook-server` holds
   * the loader and the compressed bundle, mounted read-only and run with the image's `node`.
   */
  private fromConfigMap(nodeImage: string, serverArgs: string[], labels: { [key: string]: string }): ServerLaunch {
    const program = webhookProgram();
    const configMap = new k8s.KubeConfigMap(this, 'Program', {
      metadata: {
        name: WEBHOOK_NAMES.program,
        labels,
        annotations: { 'cdk8s-kyma-serverless/program-sha256': program.sha256 },
      },
      data: { [WEBHOOK_PROGRAM_MAIN]: WEBHOOK_PROGRAM_LOADER },
      binaryData: { [WEBHOOK_PROGRAM_BUNDLE]: program.bundleBase64 },
    });
    return {
      image: nodeImage,
      command: ['node', `${WEBHOOK_PROGRAM_DIR}/${WEBHOOK_PROGRAM_MAIN}`],
      args: serverArgs,
      volumes: [{ name: 'program', configMap: { name: configMap.name } }],
      volumeMounts: [{ name: 'program', mountPath: WEBHOOK_PROGRAM_DIR, readOnly: true }],
      annotations: { 'checksum/program': program.sha256 },
    };
  }

  /** RBAC of self-managed certificates: its Secret and its two configurations, by name. */
  private grantCertificateAccess(serviceAccount: k8s.KubeServiceAccount, namespace: string, labels: { [key: string]: string }): void {
    const subjects = [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace }];
    const role = new k8s.KubeRole(this, 'Role', {
      metadata: { name: WEBHOOK_NAMES.workload, labels },
      rules: [
        // The first replica creates the certificate Secret; RBAC cannot restrict create by name,
        // so this Role (the stack's namespace only) is the limit.
        { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
        // Reading and renewing the certificate: only this one Secret.
        { apiGroups: [''], resources: ['secrets'], resourceNames: [WEBHOOK_NAMES.secret], verbs: ['get', 'update'] },
      ],
    });
    new k8s.KubeRoleBinding(this, 'RoleBinding', {
      metadata: { name: WEBHOOK_NAMES.workload, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
      subjects,
    });
    const clusterRole = clusterScoped(new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name: WEBHOOK_NAMES.workload, labels },
      rules: [
        // Writing the CA into caBundle of the defaulting webhook: only our configuration.
        {
          apiGroups: ['admissionregistration.k8s.io'],
          resources: ['mutatingwebhookconfigurations'],
          resourceNames: [WEBHOOK_NAMES.mutating],
          verbs: ['get', 'update'],
        },
        // The same for the validating webhook.
        {
          apiGroups: ['admissionregistration.k8s.io'],
          resources: ['validatingwebhookconfigurations'],
          resourceNames: [WEBHOOK_NAMES.validating],
          verbs: ['get', 'update'],
        },
      ],
    }));
    clusterScoped(new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name: WEBHOOK_NAMES.workload, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole.name },
      subjects,
    }));
  }
}
