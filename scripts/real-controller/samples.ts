/**
 * Upstream's sample Functions, as the runs with a real controller (e2e:controller) and on a real node
 * (e2e:node) apply them: in namespace upstream-samples, each under a name of its own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../../src/api';
import { parseManifests } from '../../src/policy/_manifest-files';

const isFunction = (o: any) => o.kind === FUNCTION_KIND && o.apiVersion === FUNCTION_API_VERSION;

/** Two samples may share a name: the later ones get a suffix, so that each is a Function of its own, in upstream-samples. */
function ownNames(functions: readonly any[], suffix: string): any[] {
  return functions.map((fn, i, all) => {
    const twin = all.slice(0, i).some(other => other.metadata.name === fn.metadata.name);
    return { ...fn, metadata: { ...fn.metadata, name: twin ? `${fn.metadata.name}-${suffix}${i}` : fn.metadata.name, namespace: 'upstream-samples' } };
  });
}

/** Upstream's 1.11.1 sample Functions (shared/reference/upstream/sample-function-*.yaml). */
export function upstreamSamples(reference: string): any[] {
  const dir = path.join(reference, 'upstream');
  if (!fs.existsSync(dir)) return [];
  return ownNames(fs.readdirSync(dir).filter(f => f.startsWith('sample-function-') && f.endsWith('.yaml')).sort()
    .flatMap(f => parseManifests(fs.readFileSync(path.join(dir, f), 'utf8')).flatMap(d => (d.object && isFunction(d.object) ? [d.object] : []))), '');
}

/** Upstream's 1.13.0 sample Functions: the manifests of the `kubectl apply` blocks of its docs (shared/reference/upstream-1.13.0/sample-functions.md). */
export function upstreamSamples113(reference: string): any[] {
  const file = path.join(reference, 'upstream-1.13.0', 'sample-functions.md');
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  const manifests = [...text.matchAll(/cat <<EOF \| kubectl apply -f -\n([\s\S]*?)\nEOF\n/g)].map(m => m[1]);
  return ownNames(manifests.flatMap(m => parseManifests(m).flatMap(d => (d.object && isFunction(d.object) ? [d.object] : []))), 'v113-')
    .map(fn => ({ ...fn, metadata: { ...fn.metadata, name: fn.metadata.name.startsWith('v113-') ? fn.metadata.name : `v113-${fn.metadata.name}` } }));
}
