import { IN_CLUSTER_CLIENT_SCRIPT } from './_in-cluster-client-script';

/**
 * The program the registry credentials Job runs, shipped to the cluster in a ConfigMap.
 *
 * It is plain JavaScript for Node.js 18 or later with no dependencies, so that a stock
 * `node` image runs it. It talks to the API server the way every in-cluster client does
 * (service account token and CA, `KUBERNETES_SERVICE_HOST`), and it never overwrites: when
 * the Secret exists, re-syncs and re-runs keep the credentials the registry was set up with.
 * The tests run this very text against a local HTTPS server.
 */
export const REGISTRY_CREDENTIALS_SCRIPT = String.raw`'use strict';
// Creates the registry credentials Secret if it does not exist. Written by cdk8s-kyma-serverless.
const crypto = require('node:crypto');
${IN_CLUSTER_CLIENT_SCRIPT}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error('environment variable ' + name + ' is required');
  return value;
}

function randomText(length) {
  let out = '';
  while (out.length < length) {
    const byte = crypto.randomBytes(1)[0];
    if (byte < 248) out += ALPHABET[byte % ALPHABET.length]; // 248 = 4 * 62: no modulo bias
  }
  return out;
}

function b64(text) {
  return Buffer.from(text, 'utf8').toString('base64');
}

function credentialsSecret(name, namespace, push, pull) {
  const username = randomText(20);
  const password = randomText(40);
  const auth = b64(username + ':' + password);
  const dockerConfig = { auths: {} };
  dockerConfig.auths[push] = { auth };
  dockerConfig.auths[pull] = { auth };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: {
        'serverless.kyma-project.io/config': 'credentials',
        'app.kubernetes.io/managed-by': 'serverless-registry-credentials-job',
      },
    },
    type: 'kubernetes.io/dockerconfigjson',
    data: {
      username: b64(username),
      password: b64(password),
      httpSecret: b64(randomText(32)),
      isInternal: b64('true'),
      pullRegAddr: b64(pull),
      pushRegAddr: b64(push),
      '.dockerconfigjson': b64(JSON.stringify(dockerConfig)),
    },
  };
}

async function main() {
  const options = inClusterOptions(15000);
  const name = env('SECRET_NAME');
  const namespace = env('SECRET_NAMESPACE');
  const base = '/api/v1/namespaces/' + encodeURIComponent(namespace) + '/secrets';

  const existing = await request(options, 'GET', base + '/' + encodeURIComponent(name));
  if (existing.status === 200) {
    log('registry credentials Secret exists; keeping it', { namespace, name });
    return 0;
  }
  if (existing.status !== 404) {
    log('cannot read the registry credentials Secret', { namespace, name, status: existing.status, body: existing.text.slice(0, 500) });
    return 1;
  }
  const secret = credentialsSecret(name, namespace, env('PUSH_REGISTRY_ADDRESS'), env('PULL_REGISTRY_ADDRESS'));
  const created = await request(options, 'POST', base, secret);
  if (created.status === 201 || created.status === 200) {
    log('registry credentials Secret created', { namespace, name });
    return 0;
  }
  if (created.status === 409) {
    log('registry credentials Secret was created meanwhile; keeping it', { namespace, name });
    return 0;
  }
  log('cannot create the registry credentials Secret', { namespace, name, status: created.status, body: created.text.slice(0, 500) });
  return 1;
}

main().then(code => { process.exitCode = code; }, error => {
  log('registry credentials Job failed', { error: String(error && error.message || error) });
  process.exitCode = 1;
});
`;
