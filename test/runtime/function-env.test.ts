import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ClusterValues, FunctionEnvError, expandReferences, readEnvFiles, resolveFunctionEnv, resolveSecretMounts,
} from '../../src/runtime/function-env';

let dir: string;
beforeAll(() => dir = fs.mkdtempSync(path.join(os.tmpdir(), 'function-env-test-')));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A cluster holding the objects given, in one namespace. */
function cluster(secrets: { [name: string]: { [key: string]: string } }, configMaps: { [name: string]: { [key: string]: string } } = {}): ClusterValues {
  return {
    where: 'the cluster of context test',
    readSecret: async (namespace, name) => (namespace === 'team-a' && secrets[name]
      ? Object.fromEntries(Object.entries(secrets[name]).map(([k, v]) => [k, Buffer.from(v)])) : undefined),
    readConfigMap: async (namespace, name) => (namespace === 'team-a' ? configMaps[name] : undefined),
  };
}

describe('readEnvFiles', () => {
  test('reads NAME=value lines, quotes, export and comments, later files winning', () => {
    const a = path.join(dir, 'a.env');
    const b = path.join(dir, 'b.env');
    fs.writeFileSync(a, '# settings\nAPI_TOKEN=abc\nexport LEVEL="debug"\nQUOTED=\'a # b\'\nMULTI="one\\ntwo"\nTRAIL=x # comment\n\n');
    fs.writeFileSync(b, 'API_TOKEN=def\n');
    expect(readEnvFiles([a, b])).toEqual({ API_TOKEN: 'def', LEVEL: 'debug', QUOTED: 'a # b', MULTI: 'one\ntwo', TRAIL: 'x' });
  });

  test('fails naming the file and line of a line that is not NAME=value, and a file that does not exist', () => {
    const bad = path.join(dir, 'bad.env');
    fs.writeFileSync(bad, 'OK=1\njust words\n');
    expect(() => readEnvFiles([bad, path.join(dir, 'missing.env')])).toThrow(FunctionEnvError);
    expect(() => readEnvFiles([bad])).toThrow(`--env-file ${bad}:2: 'just words' is not NAME=value: write one variable per line, such as API_TOKEN=abc`);
    expect(() => readEnvFiles([path.join(dir, 'missing.env')])).toThrow(/cannot be read \(ENOENT\): give an existing file/);
  });
});

test('expandReferences replaces $(NAME) of earlier variables, keeps unknown ones and reads $$ as $', () => {
  expect(expandReferences('$(HOST):$(PORT)/$(NONE) $$(HOST)', new Map([['HOST', 'db'], ['PORT', '5432']]))).toBe('db:5432/$(NONE) $(HOST)');
});

describe('resolveFunctionEnv', () => {
  const spec = {
    name: 'orders',
    namespace: 'team-a',
    labels: { tier: 'back' },
    resourceConfiguration: { function: { profile: 'XS' } },
    env: [
      { name: 'HOST', value: 'db' },
      { name: 'URL', value: 'postgres://$(HOST)' },
      { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } },
      { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'settings', key: 'level', optional: true } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'TIER', valueFrom: { fieldRef: { fieldPath: 'metadata.labels[\'tier\']' } } },
      { name: 'MANAGED_BY', valueFrom: { fieldRef: { fieldPath: 'metadata.labels[\'serverless.kyma-project.io/managed-by\']' } } },
      { name: 'MEMORY_MB', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      { name: 'CPUS', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
    ],
  };

  test('takes plain values as declared, keys from the values given, Pod fields and resources as the cluster gives them', async () => {
    const { env, notes } = await resolveFunctionEnv(spec, { values: { API_TOKEN: 'secret', EXTRA: '1' } });
    expect(Object.fromEntries(env.map(e => [e.name, e.value]))).toEqual({
      HOST: 'db', URL: 'postgres://db', API_TOKEN: 'secret', POD_NAME: 'orders-local', TIER: 'back', MANAGED_BY: 'function-controller', MEMORY_MB: '256', CPUS: '1', EXTRA: '1',
    });
    expect(notes).toEqual([
      'env LEVEL: key level of ConfigMap settings is optional and has no value here (no --env-file gives it): the variable is not set',
      'env EXTRA=1: set for this local run only (by --env, an env file or the env option): the Function\'s env does not declare it, so in the cluster '
        + 'it is not set; to have it there too, add it to the Function\'s env (function.yaml: env: { EXTRA: "1" })',
    ]);
  });

  test('a runtime setting given only here says what the runtime uses in the cluster, and where to declare it', async () => {
    const { notes } = await resolveFunctionEnv({ ...spec, env: [] }, { values: { FUNC_TIMEOUT: '3' } });
    expect(notes).toEqual(['env FUNC_TIMEOUT=3: set for this local run only (by --env, an env file or the env option): the Function\'s env does not declare it, '
      + 'so in the cluster it is not set and the runtime uses its default, 180 seconds; to have it there too, add it to the Function\'s env '
      + '(function.yaml: env: { FUNC_TIMEOUT: "3" })']);
    expect(notes.join('\n')).not.toContain('env file here only');
  });

  test('reads keys from a cluster in the Function\'s namespace', async () => {
    const { env } = await resolveFunctionEnv(spec, { values: {}, cluster: cluster({ api: { token: 'from-cluster' } }, { settings: { level: 'info' } }) });
    expect(env.find(e => e.name === 'API_TOKEN')?.value).toBe('from-cluster');
    expect(env.find(e => e.name === 'LEVEL')?.value).toBe('info');
  });

  test('fails when a key has no value, naming the variable, the key, and where to give it', async () => {
    await expect(resolveFunctionEnv(spec, { values: {} })).rejects.toThrow(
      'env API_TOKEN: needs key token of Secret api, and no --env-file gives it: give it in an env file (--env-file .env with the line API_TOKEN=...), '
      + 'or read it from the cluster with --from-cluster');
    await expect(resolveFunctionEnv(spec, { values: {}, cluster: cluster({ api: { other: 'x' } }) })).rejects.toThrow(
      'env API_TOKEN: needs key token of Secret api, and Secret team-a/api in the cluster of context test has no key token');
    await expect(resolveFunctionEnv(spec, { values: {}, cluster: cluster({}) })).rejects.toThrow('the cluster of context test has no Secret team-a/api');
  });

  test('fails for a Pod field that has no value here', async () => {
    await expect(resolveFunctionEnv({ name: 'f', namespace: 'n', env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'status.qosClass' } } }] }, { values: {} }))
      .rejects.toThrow('env X: the Pod field status.qosClass has no value here: give one in an env file (X=...)');
  });
});

describe('resolveSecretMounts', () => {
  const mounts = [{ secretName: 'tls', mountPath: '/etc/tls' }];

  test('maps each mount path to the folder given for its Secret', async () => {
    const resolved = await resolveSecretMounts('team-a', mounts, { folders: { tls: dir } });
    expect(resolved.folders).toEqual({ '/etc/tls': dir });
  });

  test('writes a Secret read from a cluster into a private folder, removed by dispose', async () => {
    const resolved = await resolveSecretMounts('team-a', mounts, { folders: {}, cluster: cluster({ tls: { 'tls.crt': 'CERT' } }) });
    const folder = resolved.folders['/etc/tls'];
    expect(fs.readFileSync(path.join(folder, 'tls.crt'), 'utf8')).toBe('CERT');
    expect(fs.statSync(folder).mode & 0o777).toBe(0o700);
    resolved.dispose();
    expect(fs.existsSync(folder)).toBe(false);
  });

  test('fails for a Secret without a folder, a folder that does not exist, and a folder for a Secret the Function does not mount', async () => {
    await expect(resolveSecretMounts('team-a', mounts, { folders: {} })).rejects.toThrow(
      'secretMounts: Secret tls (mounted at /etc/tls) has no local folder: give one with --mount tls=<folder holding a file per key>, or read it from the cluster with --from-cluster');
    await expect(resolveSecretMounts('team-a', mounts, { folders: { tls: path.join(dir, 'nope') } })).rejects.toThrow(/is not a folder: give a folder that holds one file per key/);
    await expect(resolveSecretMounts('team-a', mounts, { folders: { tls: dir, tsl: dir } })).rejects.toThrow(
      `--mount tsl=${dir}: the Function mounts no Secret tsl (it mounts tls): give the name of a mounted Secret`);
  });
});
