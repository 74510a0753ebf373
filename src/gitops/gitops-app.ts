/**
 * GitOpsApp: an App whose output folder Argo CD, Flux and `kubectl kustomize` take as it is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiObject, App, Chart, Names, Yaml, YamlOutputType } from 'cdk8s';
import { IConstruct } from 'constructs';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api/function-schema';
import { renderedAsValidated, wasValidAtSynth } from '../function/_valid-at-synth';
import {
  ManifestDocuments, ReleaseSource, Severity, VALIDATED_FOLDERS_ENV, formatWarnings, releaseLoadedHandlerParser, validateDocuments,
} from '../policy/manifests';
import type { IAppliedAfter } from '../namespace/applied-after';
import { releaseOf } from '../stack/release-scope';
import { ServerlessStack } from '../stack/serverless-stack';
import { apiObjectJson } from './_object-json';
import { ConstructTree } from './_tree';
import { stringifyYaml, stringifyYamlDocuments } from '../_yaml';
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

function appliedAfter(chart: Chart): readonly Chart[] {
  return (chart as Partial<IAppliedAfter>).appliedAfter ?? [];
}

/** The API objects a chart writes, in dependency order: those whose closest chart it is (cdk8s's order). */
function apiObjectsOf(chart: Chart, tree: ConstructTree): ApiObject[] {
  const constructs = tree.topology(chart);
  const objects: ApiObject[] = [];
  for (let i = 0; i < constructs.length; i++) {
    const construct = constructs[i];
    if (ApiObject.isApiObject(construct) && Chart.of(construct) === chart) objects.push(construct);
  }
  return objects;
}

/**
 * A chart's objects as JSON: cdk8s's `chart.toJson()` without the validation of the whole app it
 * starts with, unless the chart overrides it; each object as its `toJson()` gives it, without
 * cdk8s's generic walk where it is the same (src/gitops/_object-json.ts). The Functions whose
 * object rendered them with the spec their KymaFunction validated go into `asValidated`: nothing
 * but this synth holds them.
 */
function chartObjects(chart: Chart, tree: ConstructTree, asValidated: Set<unknown>): unknown[] {
  if (chart.toJson !== Chart.prototype.toJson) return chart.toJson();
  return apiObjectsOf(chart, tree).map(o => {
    const json = apiObjectJson(o);
    if (renderedAsValidated(json, o)) asValidated.add(json);
    return json;
  });
}

/**
 * What cdk8s's App.synth does before it writes: a chart depends on the charts it holds, and on the
 * charts of the constructs its constructs depend on; an API object on the API objects of the
 * constructs its constructs depend on, in its own chart.
 *
 * @returns whether any chart depends on another (cdk8s then numbers the files)
 */
function resolveDependencies(app: App, findAll: (construct: IConstruct) => readonly IConstruct[]): boolean {
  let dependantCharts = false;
  for (const parent of findAll(app).filter(Chart.isChart)) {
    for (const child of parent.node.children.filter(Chart.isChart)) {
      parent.node.addDependency(child);
      dependantCharts = true;
    }
  }
  // Every construct's dependencies, in order (most constructs have none: no list is built for them).
  const dependencies = () => {
    const all: Array<{ readonly source: IConstruct; readonly target: IConstruct }> = [];
    const sources = findAll(app);
    for (let s = 0; s < sources.length; s++) {
      const source = sources[s];
      const targets = source.node.dependencies;
      for (let i = 0; i < targets.length; i++) all.push({ source, target: targets[i] });
    }
    return all;
  };
  const declared = dependencies();
  let chartsAdded = false;
  for (const { source, target } of declared) {
    const sourceChart = Chart.of(source);
    const targetChart = Chart.of(target);
    if (sourceChart !== targetChart) {
      sourceChart.node.addDependency(targetChart);
      dependantCharts = chartsAdded = true;
    }
  }
  // With the dependencies the charts were just given, when there are any: cdk8s walks the app again.
  for (const { source, target } of chartsAdded ? dependencies() : declared) {
    const sourceChart = Chart.of(source);
    const targetChart = Chart.of(target);
    const targets = findAll(target).filter(ApiObject.isApiObject).filter(o => Chart.of(o) === targetChart);
    const sources = findAll(source).filter(ApiObject.isApiObject).filter(o => Chart.of(o) === sourceChart);
    for (const t of targets) {
      for (const s of sources) if (t !== s) s.node.addDependency(t);
    }
  }
  return dependantCharts;
}

/**
 * The kustomization that lists the manifests of a folder, in file order.
 *
 * @param files the manifest files
 * @returns the text of `kustomization.yaml`
 */
export function kustomization(files: readonly string[]): string {
  return stringifyYaml({
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
  /** Whether synth writes `construct-metadata.json`, as cdk8s's App does when `cdk8s synth` asks for it. */
  private readonly recordsConstructMetadata: boolean;

  constructor(props: GitOpsAppProps = {}) {
    super({ outdir: props.outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
    this.recordsConstructMetadata = process.env.CDK8S_RECORD_CONSTRUCT_METADATA === 'true';
  }

  /**
   * Annotates the objects, synthesizes the charts, names the files in apply order, writes
   * `kustomization.yaml`, then checks the output as `kyma-serverless validate` does.
   *
   * @throws when an object breaks its schema, a rule of the Function API or the security
   * baseline, naming the file, the object, the field and the rule
   */
  public override synth(): void {
    // The tree is decided before validation: walked once, for everything below.
    const tree = new ConstructTree(this);
    addSyncAnnotations(this, tree.all);
    // What cdk8s's App.synth does, once: each construct validated, the charts' dependencies taken
    // from their constructs', one file per chart. Its Chart.toJson would validate the whole app
    // again for every chart, so each chart's objects are rendered here, once: the files are
    // written from them, and the check below reads the same objects, not the files parsed back.
    fs.mkdirSync(this.outdir, { recursive: true });
    const errors = tree.all.flatMap(c => c.node.validate().map(error => `[${c.node.path}] ${error}`));
    // Every handler has been checked: the parser's worker is not needed for the rest.
    releaseLoadedHandlerParser();
    if (errors.length) throw new Error(`Validation failed with the following errors:\n  ${errors.join('\n  ')}`);
    const numbered = resolveDependencies(this, construct => tree.subtree(construct));
    // App.charts, in the order of cdk8s's DependencyGraph, from the tree walked above.
    const charts = tree.topology(this).filter(Chart.isChart);
    const written = new Map<Chart, unknown[]>();
    const asValidated = new Set<unknown>();
    charts.forEach((chart, index) => {
      const objects = chartObjects(chart, tree, asValidated);
      written.set(chart, objects);
      const file = `${numbered ? `${String(index).padStart(4, '0')}-` : ''}${Names.toDnsLabel(chart)}${this.outputFileExtension}`;
      // A writer that gives cdk8s's bytes in a tenth of the time (src/_yaml.ts), and cdk8s's own for what it leaves to it.
      fs.writeFileSync(path.join(this.outdir, file), stringifyYamlDocuments(objects) ?? Yaml.stringify(...objects), { encoding: 'utf8' });
    });
    if (this.recordsConstructMetadata) {
      const resources = Object.fromEntries(charts.flatMap(chart => apiObjectsOf(chart, tree)).map(o => [o.name, { path: o.node.path }]));
      fs.writeFileSync(path.join(this.outdir, 'construct-metadata.json'), JSON.stringify({ version: '1.0.0', resources }));
    }
    this.nameFilesInApplyOrder();
    const files = fs.readdirSync(this.outdir).filter(f => f.endsWith(this.outputFileExtension));
    fs.writeFileSync(path.join(this.outdir, KUSTOMIZATION_FILE), kustomization(files));
    this.writeFluxStages(files, written);
    this.validateOutput(files, written, asValidated);
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
  private validateOutput(files: readonly string[], written: ReadonlyMap<Chart, unknown[]>, asValidated: ReadonlySet<unknown>): void {
    const fileOf = (chart: Chart) => this.fileOf(chart, files);
    const documents: ManifestDocuments[] = [...written].map(([chart, objects]) => ({ file: fileOf(chart), documents: objects.map(object => ({ object })) }))
      .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const chartOfFile = new Map([...written.keys()].map(chart => [fileOf(chart), chart]));
    const report = validateDocuments(documents, {
      checkedAlready: (object, release) => object?.apiVersion === FUNCTION_API_VERSION && object?.kind === FUNCTION_KIND
        && wasValidAtSynth(this, object, release, asValidated.has(object)),
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
