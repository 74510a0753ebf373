/**
 * GitOpsApp: an App whose output folder Argo CD, Flux and `kubectl kustomize` take as it is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Chart, Names, Yaml, YamlOutputType } from 'cdk8s';
import { FUNCTION_API_VERSION, FUNCTION_KIND, _wasValidAtSynth } from '../api';
import { ManifestDocuments, ReleaseSource, Severity, VALIDATED_FOLDERS_ENV, formatWarnings, validateDocuments } from '../policy/manifests';
import { releaseOf } from '../stack/release-scope';
import { ServerlessStack } from '../stack/serverless-stack';
import { stringifyYamlDocuments } from './_yaml';
import { FLUX_STAGES_FOLDER, fluxStageKustomizations } from './flux-stages';
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
 * A chart that must be applied after other charts. `FunctionNamespace` is one (after its stack).
 *
 * `chart.addDependency(other)` orders files too, but cdk8s then makes every object of one chart
 * depend on every object of the other, which costs time and memory quadratic in the objects;
 * {@link GitOpsApp} orders the files by this instead.
 */
export interface IAppliedAfter {
  /** The charts whose files must come first. */
  readonly appliedAfter: Chart[];
}

function appliedAfter(chart: Chart): readonly Chart[] {
  return (chart as Partial<IAppliedAfter>).appliedAfter ?? [];
}

/**
 * The kustomization that lists the manifests of a folder, in file order.
 *
 * @param files the manifest files
 * @returns the text of `kustomization.yaml`
 */
export function kustomization(files: readonly string[]): string {
  return Yaml.stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [...files].sort(),
  });
}

/**
 * An App that writes one file per chart, in apply order (charts that others depend on or are
 * applied after first: `0000-…`, `0001-…`; see {@link IAppliedAfter}), annotates every object
 * with its Argo CD sync wave and options, writes a `kustomization.yaml` that lists the files, so
 * that `kubectl kustomize`, a Flux Kustomization and an Argo CD Application all take the folder
 * as it is, and checks its output as `kyma-serverless validate` does.
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

  /**
   * Annotates the objects, synthesizes the charts, names the files in apply order, writes
   * `kustomization.yaml`, then checks the output as `kyma-serverless validate` does.
   *
   * @throws when an object breaks its schema, a rule of the Function API or the security
   * baseline, naming the file, the object, the field and the rule
   */
  public override synth(): void {
    addSyncAnnotations(this);
    // Each chart's objects are resolved once: cdk8s writes them, and the check below reads the
    // same objects, not the files parsed back.
    const written = new Map<Chart, unknown[]>();
    const charts = this.charts;
    for (const chart of charts) {
      const toJson = chart.toJson.bind(chart);
      chart.toJson = () => {
        const objects = toJson();
        written.set(chart, objects);
        return objects;
      };
    }
    // cdk8s writes each file with Yaml.save; for the length of this synth, files are written by a
    // writer that gives the same bytes in a tenth of the time (src/gitops/_yaml.ts), and by
    // cdk8s's own for what that writer leaves to it.
    const save = Yaml.save;
    Yaml.save = (file: string, documents: unknown[]) => {
      fs.writeFileSync(file, stringifyYamlDocuments(documents) ?? Yaml.stringify(...documents), { encoding: 'utf8' });
    };
    try {
      super.synth();
    } finally {
      Yaml.save = save;
      for (const chart of charts) delete (chart as Partial<Pick<Chart, 'toJson'>>).toJson;
    }
    this.nameFilesInApplyOrder();
    const files = fs.readdirSync(this.outdir).filter(f => f.endsWith(this.outputFileExtension));
    fs.writeFileSync(path.join(this.outdir, KUSTOMIZATION_FILE), kustomization(files));
    this.writeFluxStages(files, written);
    this.validateOutput(files, written);
  }

  /**
   * Writes the Flux stage folders (`flux/stack/`, `flux/functions/`, `flux/reach/`), each a
   * `kustomization.yaml` over the files just written (see `FluxKustomizationStages`).
   */
  private writeFluxStages(files: readonly string[], written: ReadonlyMap<Chart, unknown[]>): void {
    const staged = [...written].map(([chart, objects]) => ({
      file: this.fileOf(chart, files),
      objects: objects as Array<{ apiVersion: string; kind: string }>,
      // Not instanceof: cdk8s makes every Chart an instance of every chart class.
      stack: ServerlessStack.prototype.isPrototypeOf(chart),
    }));
    for (const [stage, text] of fluxStageKustomizations(staged)) {
      const folder = path.join(this.outdir, FLUX_STAGES_FOLDER, stage);
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, KUSTOMIZATION_FILE), text);
    }
  }

  /** The file of a chart: named after the chart, or numbered in apply order (`0001-<chart>`). */
  private fileOf(chart: Chart, files: readonly string[]): string {
    const name = `${Names.toDnsLabel(chart)}${this.outputFileExtension}`;
    return files.find(f => f === name || (/^\d{4}-/.test(f) && f.slice(5) === name)) ?? name;
  }

  /**
   * Every `cdk8s synth` fails on a manifest the cluster would reject or the baseline forbids: the
   * objects just written are checked as `kyma-serverless validate` checks the folder, in memory.
   * A Function its KymaFunction validated at synth, unchanged since, is not checked twice.
   * Functions are checked against the release of the Function CRD in the output, as `validate`
   * reads it; without one, against the release of the chart that holds them (its
   * FunctionNamespace's, or the app's stacks').
   */
  private validateOutput(files: readonly string[], written: ReadonlyMap<Chart, unknown[]>): void {
    const fileOf = (chart: Chart) => this.fileOf(chart, files);
    const documents: ManifestDocuments[] = [...written].map(([chart, objects]) => ({ file: fileOf(chart), documents: objects.map(object => ({ object })) }))
      .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const chartOfFile = new Map([...written.keys()].map(chart => [fileOf(chart), chart]));
    const report = validateDocuments(documents, {
      checkedAlready: object => object?.apiVersion === FUNCTION_API_VERSION && object?.kind === FUNCTION_KIND && _wasValidAtSynth(object),
      releaseOfFile: file => {
        const chart = chartOfFile.get(file);
        return chart && releaseOf(chart);
      },
    });
    const errors = report.findings.filter(f => f.severity === Severity.ERROR);
    if (errors.length) {
      const lines = errors.map(f => `${f.file}: ${f.object}${f.path ? ` (${f.path})` : ''}: ${f.message} [${f.rule}]`);
      // Which release the Functions were held to, when one of them failed: a runtime of one release is none of the other.
      const release = report.releases[0];
      const checked = release && errors.some(f => f.object.startsWith(`${FUNCTION_KIND} `))
        ? `\n(Functions were checked against release ${release.release}, `
          + `${release.source === ReleaseSource.FUNCTION_CRD ? `that of the Function CRD in ${release.file}` : 'that of their FunctionNamespace or the app\'s stacks'})`
        : '';
      throw new Error(`The output ${this.outdirForMessages()}is invalid:\n  ${lines.join('\n  ')}${checked}`);
    }
    process.stderr.write(formatWarnings(report.findings, this.outdirForWarnings()));
    const record = process.env[VALIDATED_FOLDERS_ENV];
    if (record) fs.appendFileSync(record, `${path.resolve(this.outdir)}\n`);
  }

  /** The output folder as warnings name it: that of `outdirForMessages`, without its words. */
  private outdirForWarnings(): string | undefined {
    const scratch = process.env.CDK8S_OUTDIR;
    if (!process.env[VALIDATED_FOLDERS_ENV] || !scratch) return this.outdir;
    const within = path.relative(path.resolve(scratch), path.resolve(this.outdir));
    return within.startsWith('..') || path.isAbsolute(within) ? this.outdir : within || undefined;
  }

  /**
   * The output folder as messages name it, with a trailing space: under `kyma-serverless synth`,
   * which writes into a scratch folder (`CDK8S_OUTDIR`) and names the output folder itself when it
   * fails, the folder of an environment within it, or nothing; else the folder.
   */
  private outdirForMessages(): string {
    const scratch = process.env.CDK8S_OUTDIR;
    if (!process.env[VALIDATED_FOLDERS_ENV] || !scratch) return `in ${this.outdir} `;
    const within = path.relative(path.resolve(scratch), path.resolve(this.outdir));
    if (within.startsWith('..') || path.isAbsolute(within)) return `in ${this.outdir} `;
    return within ? `of environment folder ${within}/ ` : '';
  }

  /**
   * Without chart dependencies cdk8s names files after their charts only; this prefixes them with
   * their place in apply order, charts in construct order except that a chart comes after those
   * it is applied after. With chart dependencies cdk8s has numbered them already.
   */
  private nameFilesInApplyOrder(): void {
    const charts = this.node.children.filter(Chart.isChart);
    const named = (chart: Chart) => path.join(this.outdir, `${Names.toDnsLabel(chart)}${this.outputFileExtension}`);
    if (!charts.some(c => appliedAfter(c).length) || !charts.every(c => fs.existsSync(named(c)))) return;
    const ordered: Chart[] = [];
    const visit = (chart: Chart, path: readonly Chart[]) => {
      if (ordered.includes(chart)) return;
      if (path.includes(chart)) throw new Error(`Charts are applied after each other in a cycle: ${[...path, chart].map(c => c.node.path).join(' -> ')}`);
      for (const before of appliedAfter(chart)) visit(before, [...path, chart]);
      ordered.push(chart);
    };
    for (const chart of charts) visit(chart, []);
    ordered.forEach((chart, index) => {
      fs.renameSync(named(chart), path.join(this.outdir, `${String(index).padStart(4, '0')}-${Names.toDnsLabel(chart)}${this.outputFileExtension}`));
    });
  }
}
