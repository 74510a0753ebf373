/**
 * The schemas of Kubernetes' `SecurityContext` (a container's) and `PodSecurityContext`, as a
 * CRD embeds them: the fields, types and list types of `k8s.io/api/core/v1` that upstream's 1.13.0
 * Function CRD holds in `spec.containerSecurityContext` and `spec.podSecurityContext` (and the
 * same in `status`). Like controller-gen, they carry no enums: the API server checks the values
 * when it validates the Function's Deployment.
 *
 * Written here rather than taken from a library: the Kubernetes JSON schemas the package depends on
 * (`kubernetes-models`, Kubernetes 1.27) lack fields the 1.13.0 CRD has (`appArmorProfile`,
 * `seLinuxChangePolicy`, `supplementalGroupsPolicy`).
 */
import { JsonSchemaProps, array, boolean, integer, object, string } from './schema';

const int64 = (description: string) => integer({ format: 'int64', description });

/** AppArmor or seccomp: a profile type and, for `Localhost`, the profile's name or path. */
function profile(what: 'AppArmor' | 'seccomp', localhost: string): JsonSchemaProps {
  return object({
    localhostProfile: string({ description: `${localhost}; only with type \`Localhost\`.` }),
    type: string({ description: '`Localhost`, `RuntimeDefault` or `Unconfined`.' }),
  }, { required: ['type'], description: `The ${what} profile of the container(s).` });
}

function seLinuxOptions(): JsonSchemaProps {
  return object({
    level: string({ description: 'The SELinux level label.' }),
    role: string({ description: 'The SELinux role label.' }),
    type: string({ description: 'The SELinux type label.' }),
    user: string({ description: 'The SELinux user label.' }),
  }, { description: 'The SELinux context applied to the container(s); the container runtime picks a random one when unset.' });
}

function windowsOptions(): JsonSchemaProps {
  return object({
    gmsaCredentialSpec: string({ description: 'The contents of the GMSA credential spec, inlined by the GMSA admission webhook.' }),
    gmsaCredentialSpecName: string({ description: 'The name of the GMSA credential spec to use.' }),
    hostProcess: boolean({ description: 'Whether to run as a Windows "Host Process" container.' }),
    runAsUserName: string({ description: 'The Windows user name that runs the entrypoint.' }),
  }, { description: 'Windows-specific settings; only on Windows nodes.' });
}

/** Fields both a container's and a Pod's security context have. */
function shared(): { [name: string]: JsonSchemaProps } {
  return {
    appArmorProfile: profile('AppArmor', 'The name of a profile loaded on the node'),
    runAsGroup: int64('The group ID the entrypoint runs as.'),
    runAsNonRoot: boolean({ description: 'Whether the kubelet refuses to start a container whose user is root (UID 0).' }),
    runAsUser: int64('The user ID the entrypoint runs as.'),
    seLinuxOptions: seLinuxOptions(),
    seccompProfile: profile('seccomp', 'The path of a profile file, relative to the kubelet\'s seccomp directory'),
    windowsOptions: windowsOptions(),
  };
}

/**
 * A container's `SecurityContext`.
 *
 * @param description what it configures, for `kubectl explain`
 */
export function containerSecurityContextSchema(description: string): JsonSchemaProps {
  return object({
    ...shared(),
    allowPrivilegeEscalation: boolean({ description: 'Whether a process may gain more privileges than its parent (no_new_privs).' }),
    capabilities: object({
      add: array(string(), { listType: 'atomic', description: 'POSIX capabilities added.' }),
      drop: array(string(), { listType: 'atomic', description: 'POSIX capabilities dropped, such as `ALL`.' }),
    }, { description: 'The POSIX capabilities added to and dropped from the container runtime\'s default set.' }),
    privileged: boolean({ description: 'Whether the container runs privileged, as root on the host.' }),
    procMount: string({ description: 'The /proc mount type: `Default` or `Unmasked`.' }),
    readOnlyRootFilesystem: boolean({ description: 'Whether the container\'s root filesystem is read-only.' }),
  }, { description });
}

/**
 * A Pod's `PodSecurityContext`.
 *
 * @param description what it configures, for `kubectl explain`
 */
export function podSecurityContextSchema(description: string): JsonSchemaProps {
  return object({
    ...shared(),
    fsGroup: int64('A supplemental group of every container, which owns the Pod\'s volumes that support it.'),
    fsGroupChangePolicy: string({ description: 'When the kubelet changes the volumes\' ownership: `OnRootMismatch` or `Always`.' }),
    seLinuxChangePolicy: string({ description: 'How the SELinux label is applied to the Pod\'s volumes: `MountOption` or `Recursive`.' }),
    supplementalGroups: array(integer({ format: 'int64' }), { listType: 'atomic', description: 'Groups of the first process of each container, besides its primary group and fsGroup.' }),
    supplementalGroupsPolicy: string({ description: 'How the supplemental groups are computed: `Merge` or `Strict`.' }),
    sysctls: array(object({
      name: string({ description: 'The name of the sysctl.' }),
      value: string({ description: 'Its value.' }),
    }, { required: ['name', 'value'], description: 'A namespaced kernel parameter.' }), { listType: 'atomic', description: 'Namespaced sysctls of the Pod.' }),
  }, { description });
}
