/**
 * GitOpsApp: an App whose output folder Argo CD, Flux and `kubectl kustomize` take as it is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, YamlOutputType } from 'cdk8s';
import { stringify } from 'yaml';
import { addSyncAnnotations } from './sync-waves';

/** The name of the generated kustomization. */
export const KUSTOMIZATION_FILE = 'kustomization.yaml';

/** Props of {@link GitOpsApp}. */
export interface GitOpsAppProps {
  /**
   * The output folder.
   *
   * @default - `CDK8S_OUTDIR` (which `cdk8s synth --output` sets), else `dist`
   */
  readonly outdir?: string;
}

/**
 * The kustomization that lists the manifests of a folder, in file order.
 *
 * @param files the manifest files
 * @returns the text of `kustomization.yaml`
 */
export function kustomization(files: readonly string[]): string {
  return stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [...files].sort(),
  });
}

/**
 * An App that writes one file per chart, in apply order (charts that others depend on first:
 * `0000-…`, `0001-…`), annotates every object with its Argo CD sync wave and options, and
 * writes a `kustomization.yaml` that lists the files, so that `kubectl kustomize`, a Flux
 * Kustomization and an Argo CD Application all take the folder as it is.
 *
 * @example
 * const app = new GitOpsApp();
 * const stack = new ServerlessStack(app, 'serverless');
 * app.synth();
 */
export class GitOpsApp extends App {
  constructor(props: GitOpsAppProps = {}) {
    super({ outdir: props.outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  }

  /** Annotates the objects, synthesizes the charts, then writes `kustomization.yaml`. */
  public override synth(): void {
    addSyncAnnotations(this);
    super.synth();
    const files = fs.readdirSync(this.outdir).filter(f => f.endsWith(this.outputFileExtension));
    fs.writeFileSync(path.join(this.outdir, KUSTOMIZATION_FILE), kustomization(files));
  }
}
