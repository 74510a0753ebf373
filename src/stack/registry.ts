/**
 * Where Function images go: the stack's internal Docker registry, or an external one.
 */
import { Size } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { FUNCTION_CONTROLLER, FunctionChildLabel } from '../api/function-status';
import { isDns1123Subdomain } from '../api/names';
import { PolicyRuleId, policyExceptions } from '../policy/policy';
// Its type only: the module loads when a stack opts in to replacing its storage (see _bind).
import type { ReplacementOptIn } from '../policy/replacement';
import { REGISTRY_CREDENTIALS_SCRIPT } from './_registry-credentials-script';
import { httpProbe, requireInteger, resourceRequirements, restrictedContainer, restrictedPod, scriptJobTemplate, shortHash } from './_util';
import { ContainerResources } from './container-resources';
import { BuildImages } from './images';
import { stringifyYaml } from '../_yaml';
import { METRICS_PORT_NAME } from './_metrics-names';
import type { RegistryMetricsTarget } from './monitoring';

/** The NodePort kubelets pull Function images from, unless `Registry.internal({ nodePort })` says otherwise (upstream's). */
export const DEFAULT_REGISTRY_NODE_PORT = 32137;

/** The name upstream gives the registry credentials Secret, and the controller's default. */
export const DEFAULT_REGISTRY_SECRET_NAME = 'serverless-registry-config-default';

/** The label the controller's Secret cache selects on; the credentials Secret must carry it. */
export const CREDENTIALS_LABEL = { key: 'serverless.kyma-project.io/config', value: 'credentials' } as const;

/** Where the internal registry's credentials come from. */
export abstract class RegistryCredentials {
  /**
   * A Job of the stack creates the credentials Secret inside the cluster, with random values,
   * only if it does not exist yet. Nothing secret is in Git, and re-syncs keep the values.
   */
  public static generateInCluster(): RegistryCredentials {
    return new GeneratedCredentials();
  }

  /**
   * Use a Secret you manage (SealedSecrets, External Secrets). It must live in the stack's
   * namespace, be labelled `serverless.kyma-project.io/config: credentials`, have type
   * `kubernetes.io/dockerconfigjson`, and hold the keys `username`, `password`,
   * `isInternal` (`"true"`), `pushRegAddr` (`serverless-docker-registry.<namespace>.svc.cluster.local:5000`),
   * `pullRegAddr` (`localhost:<nodePort>`) and `.dockerconfigjson` with an auth entry for both
   * addresses; optionally `httpSecret`.
   *
   * @param secretName name of the Secret in the stack's namespace
   */
  public static fromExistingSecret(secretName: string): RegistryCredentials {
    return new ExistingCredentials(secretName);
  }

  /** Name of the credentials Secret in the stack's namespace. */
  public abstract readonly secretName: string;

  /** Whether the stack runs a Job that creates the Secret. */
  public abstract readonly generated: boolean;
}

class GeneratedCredentials extends RegistryCredentials {
  public readonly secretName = DEFAULT_REGISTRY_SECRET_NAME;
  public readonly generated = true;
}

class ExistingCredentials extends RegistryCredentials {
  public readonly generated = false;
  constructor(public readonly secretName: string) {
    super();
    if (!isDns1123Subdomain(secretName)) {
      throw new Error(`'secretName' (${secretName}) must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`);
    }
  }
}

/** Options of the internal registry. */
export interface InternalRegistryOptions {
  /**
   * Size of the registry's PersistentVolumeClaim. Images are never garbage-collected, so size
   * it for every Function version you keep.
   *
   * @default Size.gibibytes(20)
   */
  readonly storageSize?: Size;

  /**
   * StorageClass of the PersistentVolumeClaim.
   *
   * @default - the cluster's default StorageClass
   */
  readonly storageClassName?: string;

  /**
   * The NodePort kubelets pull Function images through (`localhost:<nodePort>`).
   *
   * @default 32137
   */
  readonly nodePort?: number;

  /**
   * Where the registry's credentials come from.
   *
   * @default RegistryCredentials.generateInCluster()
   */
  readonly credentials?: RegistryCredentials;

  /**
   * Resources of the registry container.
   *
   * @default - requests 10m CPU / 300Mi, limits 400m CPU / 800Mi (upstream's)
   */
  readonly resources?: ContainerResources;

  /**
   * Run a root init container that gives the storage volume to the registry's user (1000).
   * Needed on volumes that ignore `fsGroup` (hostPath, local-path); turn it off on CSI volumes
   * that honour `fsGroup` and every registry container runs under PSS `restricted`.
   *
   * @default true
   */
  readonly fixStorageOwnership?: boolean;

  /**
   * Let a sync delete the registry's PersistentVolumeClaim and create it again, for a change the
   * API server refuses to make in place: a smaller `storageSize`, another `storageClassName`. It
   * writes the Argo CD sync options `Replace=true,Force=true` and the Flux annotation
   * `kustomize.toolkit.fluxcd.io/force: enabled` on the claim, and `kyma-serverless apply`
   * replaces it too. The images in the registry are lost: every Function must be built again.
   * Set it for the sync that replaces the claim, then remove it.
   *
   * @default false
   * @see https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#replace-resource-instead-of-applying-changes
   */
  readonly replaceStorage?: boolean;
}

/** Options of an external registry. */
export interface ExternalRegistryOptions {
  /**
   * A Secret you manage, in the stack's namespace, labelled
   * `serverless.kyma-project.io/config: credentials`, of type `kubernetes.io/dockerconfigjson`,
   * with keys `isInternal` (`"false"`), `registryAddress` (push and pull address, such as
   * `registry.example.com/team`), and `.dockerconfigjson` with credentials for it.
   */
  readonly secretName: string;
}

/**
 * Where the controller pushes Function images and kubelets pull them from.
 *
 * @see https://kyma-project.io/#/serverless-manager/user/tutorials/01-120-switch-to-external-registry
 */
export abstract class Registry {
  /** The stack runs a Docker registry on a PersistentVolume (fine for development; no HA, no GC). */
  public static internal(options: InternalRegistryOptions = {}): Registry {
    return new InternalRegistryConfig(options);
  }

  /** Functions are pushed to and pulled from a registry outside the stack. */
  public static external(options: ExternalRegistryOptions): Registry {
    return new ExternalRegistryConfig(options);
  }

  /** Name of the Secret that holds the registry configuration the controller reads. */
  public abstract readonly secretName: string;

  /**
   * Renders the registry, if the stack runs it.
   *
   * @returns where Prometheus scrapes the registry; undefined for one outside the stack
   * @internal
   */
  public abstract _bind(scope: Construct, props: RegistryBindProps): RegistryMetricsTarget | undefined;
}

/** What the stack tells its registry when rendering it. @internal */
export interface RegistryBindProps {
  readonly namespace: string;
  readonly images: BuildImages;
  readonly priorityClassName: string;
  /** Whether Prometheus scrapes the registry: its container then names the metrics port. */
  readonly monitoring?: boolean;
}

class ExternalRegistryConfig extends Registry {
  public readonly secretName: string;
  constructor(options: ExternalRegistryOptions) {
    super();
    this.secretName = RegistryCredentials.fromExistingSecret(options.secretName).secretName;
  }

  public _bind(): undefined {
    // Nothing to render: the registry and its Secret are the user's.
    return undefined;
  }
}

class InternalRegistryConfig extends Registry {
  public readonly secretName: string;
  constructor(private readonly options: InternalRegistryOptions) {
    super();
    requireInteger('nodePort', options.nodePort ?? DEFAULT_REGISTRY_NODE_PORT, 30000, 32767);
    this.secretName = (options.credentials ?? RegistryCredentials.generateInCluster()).secretName;
  }

  public _bind(scope: Construct, props: RegistryBindProps): RegistryMetricsTarget {
    new InternalRegistry(scope, 'Registry', { ...this.options, ...props });
    return { name: INTERNAL_REGISTRY_NAME, podSelector: INTERNAL_REGISTRY_SELECTOR, portName: METRICS_PORT_NAME, claimName: INTERNAL_REGISTRY_NAME };
  }
}

/** The name of the internal registry's objects: a contract with the push address. */
export const INTERNAL_REGISTRY_NAME = 'serverless-docker-registry';

/** The port the internal registry listens on, in the cluster and in its Service. */
export const INTERNAL_REGISTRY_PORT = 5000;

/**
 * The port of the internal registry's debug listener, which serves Prometheus metrics on `/metrics`
 * (and Go's profiler): only the registry's Pod, not its NodePort Service, has it.
 */
export const INTERNAL_REGISTRY_METRICS_PORT = 5001;

/** The label the controller puts on its build Jobs: deleting them makes it build each Function again. */
const CONTROLLER_MANAGED_JOBS = `${FunctionChildLabel.MANAGED_BY}=${FUNCTION_CONTROLLER}`;

/**
 * How the internal registry's storage opts in to replacement, for the synth check and `diff`:
 * what to set, and what it costs.
 */
export const REGISTRY_STORAGE_REPLACEMENT: ReplacementOptIn = {
  matches: object => object?.kind === 'PersistentVolumeClaim' && object?.metadata?.name === INTERNAL_REGISTRY_NAME,
  prop: 'Registry.internal({ replaceStorage: true }) (ServerlessStack prop registry)',
  cost: 'the registry\'s images are deleted with it: running Function Pods keep theirs, but Pods started later cannot pull them until '
    + 'each Function is built again, which the controller does not start by itself: delete the build Jobs '
    + `(kubectl delete jobs -A -l ${CONTROLLER_MANAGED_JOBS}), and it builds each Function anew at its next reconcile (within 5 minutes)`,
};

/** The Deployment selector of the internal registry: upstream's, because a Deployment's selector can never change. */
export const INTERNAL_REGISTRY_SELECTOR = { app: 'docker-registry', release: 'serverless' } as const;

interface InternalRegistryProps extends InternalRegistryOptions, RegistryBindProps {}

/**
 * The internal Docker registry: config, storage, Deployment, NodePort Service, and the Job
 * that creates its credentials.
 */
class InternalRegistry extends Construct {
  constructor(scope: Construct, id: string, props: InternalRegistryProps) {
    super(scope, id);
    const name = INTERNAL_REGISTRY_NAME;
    const nodePort = props.nodePort ?? DEFAULT_REGISTRY_NODE_PORT;
    const credentials = props.credentials ?? RegistryCredentials.generateInCluster();
    const selector = { ...INTERNAL_REGISTRY_SELECTOR };
    const labels = { 'app.kubernetes.io/name': 'docker-registry', 'app.kubernetes.io/component': 'registry' };

    const config = new k8s.KubeConfigMap(this, 'Config', {
      metadata: { name: `${name}-config`, labels },
      data: {
        'config.yml': stringifyYaml({
          version: 0.1,
          log: { formatter: 'json', fields: { service: 'registry' } },
          storage: { cache: { blobdescriptor: 'inmemory' }, filesystem: { rootdirectory: '/var/lib/registry' } },
          http: {
            addr: `:${INTERNAL_REGISTRY_PORT}`,
            headers: { 'X-Content-Type-Options': ['nosniff'] },
            debug: { addr: `:${INTERNAL_REGISTRY_METRICS_PORT}`, prometheus: { enabled: true, path: '/metrics' } },
          },
          health: { storagedriver: { enabled: true, interval: '10s', threshold: 3 } },
        }),
      },
    });

    const pvc = new k8s.KubePersistentVolumeClaim(this, 'Storage', {
      metadata: { name, labels },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: k8s.Quantity.fromString((props.storageSize ?? Size.gibibytes(20)).asString()) } },
        storageClassName: props.storageClassName,
      },
    });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (props.replaceStorage) (require('../policy/replacement') as typeof import('../policy/replacement')).allowReplacement(pvc);

    const resources = props.resources ?? {
      requestCpu: Cpu.millis(10), requestMemory: Size.mebibytes(300), limitCpu: Cpu.millis(400), limitMemory: Size.mebibytes(800),
    };
    const initContainers: k8s.Container[] = [];
    const fixStorageOwnership = props.fixStorageOwnership ?? true;
    if (fixStorageOwnership) {
      initContainers.push({
        name: 'fix-storage-ownership',
        image: props.images.registryInit,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-ec', 'chown -R 1000:1000 /var/lib/registry/'],
        // PSS exception (baseline): volumes that ignore fsGroup (hostPath, local-path) come up
        // owned by root, and only root with CHOWN can hand them to the registry's user 1000.
        // This container does nothing else; the registry itself runs restricted.
        securityContext: restrictedContainer({
          runAsNonRoot: false, runAsUser: 0, runAsGroup: 0, capabilities: { drop: ['ALL'], add: ['CHOWN'] },
        }),
        resources: resourceRequirements({
          requestCpu: Cpu.millis(10), requestMemory: Size.mebibytes(16), limitCpu: Cpu.millis(100), limitMemory: Size.mebibytes(64),
        }),
        volumeMounts: [{ name: 'data', mountPath: '/var/lib/registry/' }],
      });
    }
    initContainers.push({
      name: 'generate-htpasswd',
      image: props.images.registryInit,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-ec', 'htpasswd -Bbn "$(cat /regcred/username.txt)" "$(cat /regcred/password.txt)" > /data/htpasswd'],
      securityContext: restrictedContainer(),
      resources: resourceRequirements({
        requestCpu: Cpu.millis(10), requestMemory: Size.mebibytes(16), limitCpu: Cpu.millis(100), limitMemory: Size.mebibytes(64),
      }),
      volumeMounts: [
        { name: 'registry-credentials', mountPath: '/regcred', readOnly: true },
        { name: 'htpasswd-data', mountPath: '/data' },
      ],
    });

    const deployment = new k8s.KubeDeployment(this, 'Deployment', {
      metadata: {
        name,
        labels,
        // The one exception of the stack from PSS restricted, recorded where `validate` reads it.
        annotations: fixStorageOwnership ? policyExceptions([{
          rule: PolicyRuleId.PSS_RESTRICTED,
          container: 'fix-storage-ownership',
          reason: 'volumes that ignore fsGroup (hostPath, local-path) come up owned by root; only root with CHOWN can hand them to the '
            + 'registry\'s user 1000. Registry.internal({ fixStorageOwnership: false }) drops this container on volumes that honour fsGroup.',
        }]) : undefined,
      },
      spec: {
        replicas: 1,
        // One registry on a ReadWriteOnce volume: the old Pod must let go of it first.
        strategy: { type: 'Recreate' },
        minReadySeconds: 5,
        selector: { matchLabels: selector },
        template: {
          metadata: {
            labels: { ...selector, ...labels, 'kyma-project.io/module': 'serverless' },
            annotations: { 'sidecar.istio.io/inject': 'false' },
          },
          spec: {
            priorityClassName: props.priorityClassName,
            automountServiceAccountToken: false,
            securityContext: restrictedPod(1000, { fsGroup: 1000 }),
            initContainers,
            containers: [{
              name: 'docker-registry',
              image: props.images.registry,
              imagePullPolicy: 'IfNotPresent',
              command: ['/bin/registry', 'serve', '/etc/distribution/config.yml'],
              ports: [
                { name: 'http-registry', containerPort: INTERNAL_REGISTRY_PORT, protocol: 'TCP' },
                // Named only for the PodMonitor, so that the output without monitoring stays as it was.
                ...(props.monitoring ? [{ name: METRICS_PORT_NAME, containerPort: INTERNAL_REGISTRY_METRICS_PORT, protocol: 'TCP' }] : []),
              ],
              env: [
                { name: 'REGISTRY_AUTH', value: 'htpasswd' },
                { name: 'REGISTRY_AUTH_HTPASSWD_REALM', value: 'Registry Realm' },
                { name: 'REGISTRY_AUTH_HTPASSWD_PATH', value: '/data/htpasswd' },
                {
                  // Signs upload state; kept in the credentials Secret so it survives restarts.
                  name: 'REGISTRY_HTTP_SECRET',
                  valueFrom: { secretKeyRef: { name: credentials.secretName, key: 'httpSecret', optional: true } },
                },
                { name: 'REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY', value: '/var/lib/registry' },
              ],
              livenessProbe: httpProbe('/', INTERNAL_REGISTRY_PORT),
              readinessProbe: httpProbe('/', INTERNAL_REGISTRY_PORT),
              resources: resourceRequirements(resources),
              securityContext: restrictedContainer(),
              volumeMounts: [
                { name: 'data', mountPath: '/var/lib/registry/' },
                { name: 'config', mountPath: '/etc/distribution' },
                { name: 'htpasswd-data', mountPath: '/data' },
              ],
            }],
            volumes: [
              { name: 'data', persistentVolumeClaim: { claimName: pvc.name } },
              { name: 'config', configMap: { name: config.name } },
              {
                name: 'registry-credentials',
                secret: {
                  secretName: credentials.secretName,
                  items: [{ key: 'username', path: 'username.txt' }, { key: 'password', path: 'password.txt' }],
                },
              },
              { name: 'htpasswd-data', emptyDir: {} },
            ],
          },
        },
      },
    });

    new k8s.KubeService(this, 'Service', {
      metadata: { name, labels },
      spec: {
        type: 'NodePort',
        selector,
        ports: [{
          name: 'http-registry',
          port: INTERNAL_REGISTRY_PORT,
          targetPort: k8s.IntOrString.fromNumber(INTERNAL_REGISTRY_PORT),
          protocol: 'TCP',
          nodePort,
        }],
      },
    });

    if (credentials.generated) {
      const job = new CredentialsJob(this, 'Credentials', {
        namespace: props.namespace,
        secretName: credentials.secretName,
        image: props.images.credentialsJob,
        pushAddress: internalPushAddress(props.namespace),
        pullAddress: `localhost:${nodePort}`,
        priorityClassName: props.priorityClassName,
      });
      // The registry Pod mounts the Secret the Job creates.
      deployment.node.addDependency(job);
    }
  }
}

/** The address build Jobs push Function images to. */
export function internalPushAddress(namespace: string): string {
  return `${INTERNAL_REGISTRY_NAME}.${namespace}.svc.cluster.local:${INTERNAL_REGISTRY_PORT}`;
}

interface CredentialsJobProps {
  readonly namespace: string;
  readonly secretName: string;
  readonly image: string;
  readonly pushAddress: string;
  readonly pullAddress: string;
  readonly priorityClassName: string;
}

/**
 * A Job that creates the registry credentials Secret, with random values, if it does not
 * exist. Its ServiceAccount can read that one Secret by name, and create Secrets in the
 * stack's namespace (RBAC cannot limit `create` by name).
 */
class CredentialsJob extends Construct {
  constructor(scope: Construct, id: string, props: CredentialsJobProps) {
    super(scope, id);
    const name = 'serverless-registry-credentials';
    const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'registry' };

    const serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', { metadata: { name, labels } });
    const role = new k8s.KubeRole(this, 'Role', {
      metadata: { name, labels },
      rules: [
        // Find out whether the credentials exist; only that one Secret.
        { apiGroups: [''], resources: ['secrets'], resourceNames: [props.secretName], verbs: ['get'] },
        // Create them when they do not. RBAC cannot restrict create by name; the Role is
        // namespaced, and the program only ever creates the Secret named above.
        { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      ],
    });
    new k8s.KubeRoleBinding(this, 'RoleBinding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: props.namespace }],
    });
    const script = new k8s.KubeConfigMap(this, 'Script', {
      metadata: { name: `${name}-script`, labels },
      data: { 'ensure-registry-credentials.js': REGISTRY_CREDENTIALS_SCRIPT },
    });

    const template = scriptJobTemplate({
      labels, serviceAccountName: serviceAccount.name, priorityClassName: props.priorityClassName, image: props.image,
      containerName: 'ensure-credentials', scriptConfigMap: script.name, scriptFile: 'ensure-registry-credentials.js',
      env: [
        { name: 'SECRET_NAME', value: props.secretName },
        { name: 'SECRET_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'PUSH_REGISTRY_ADDRESS', value: props.pushAddress },
        { name: 'PULL_REGISTRY_ADDRESS', value: props.pullAddress },
      ],
    });

    const job = new k8s.KubeJob(this, 'Resource', {
      // A Job's template cannot change; a new spec gets a new name, deterministic from its content.
      metadata: { name: `${name}-${shortHash(JSON.stringify(template))}`, labels },
      spec: { backoffLimit: 6, template },
    });
    job.node.addDependency(role, script);
  }
}
