/**
 * The apps of the run beside the coverage app: the app of `cdk8s.yaml` (src/main.ts's default
 * environment) for a release, and what a synthesized folder needs to be applied here as a whole.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ENVIRONMENTS } from '../../src/environments';
import { FunctionFolder, FunctionNamespace, GitOpsApp, ServerlessRelease, ServerlessStack } from '../../src';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Synthesizes the app `npm run synth` writes into dist/ (its default environment: the stack and the
 * Functions of functions/ in default-functions), for a release.
 */
export function synthDefaultApp(outdir: string, release: ServerlessRelease): void {
  const environment = ENVIRONMENTS.find(e => e.name === '')!;
  const app = new GitOpsApp({ outdir });
  const stack = new ServerlessStack(app, 'serverless', { ...environment.stack, release });
  const namespaces = new Map<string, FunctionNamespace>();
  const namespace = (name: string) => {
    if (!namespaces.has(name)) namespaces.set(name, new FunctionNamespace(app, name, { stack, quota: environment.functionNamespaceQuota }));
    return namespaces.get(name)!;
  };
  namespace('default-functions');
  for (const folder of FunctionFolder.discover(path.join(ROOT, 'functions'))) folder.addTo(namespace(folder.namespace ?? 'default-functions'));
  app.synth();
}

/**
 * Points the admission webhook configurations of a synthesized folder at a URL instead of their
 * Service: no Pod serves the Service here, the webhook program runs on this machine. Done in the
 * files, so that every apply of the folder sends the same configuration (a patch in the cluster
 * would be undone by the next apply). Only `clientConfig` changes.
 *
 * The webhook program writes its CA only into webhooks that call its Service: give it here once
 * the program made it (the `ca.crt` of its Secret), as a manifest without cert-manager carries it.
 *
 * @param base such as `https://serverless-webhook.kyma-system.svc:8443`
 * @param caBundle the CA, base64, when known
 * @returns how many webhooks it changed
 */
export function pointWebhooksAt(folder: string, base: string, caBundle?: string): number {
  let changed = 0;
  for (const file of fs.readdirSync(folder).filter(f => f.endsWith('.yaml') && f !== 'kustomization.yaml')) {
    const text = fs.readFileSync(path.join(folder, file), 'utf8');
    if (!/WebhookConfiguration/.test(text)) continue;
    const documents = parseAllDocuments(text);
    let touched = false;
    for (const document of documents) {
      const object = document.toJSON();
      if (!/^(Mutating|Validating)WebhookConfiguration$/.test(object?.kind ?? '')) continue;
      object.webhooks.forEach((webhook: any, i: number) => {
        const service = webhook.clientConfig?.service;
        const url = service ? `${base}${service.path ?? '/'}` : webhook.clientConfig?.url;
        if (!url) return;
        const ca = caBundle ?? webhook.clientConfig.caBundle;
        const clientConfig = { url, ...(ca ? { caBundle: ca } : {}) };
        document.setIn(['webhooks', i, 'clientConfig'], document.createNode(clientConfig));
        changed++;
        touched = true;
      });
    }
    if (touched) fs.writeFileSync(path.join(folder, file), documents.map(d => d.toString()).join(''));
  }
  return changed;
}
