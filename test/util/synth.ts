/**
 * Helpers to synthesize charts in tests and find objects in the output.
 */
import { Testing } from 'cdk8s';
import { ServerlessStack, ServerlessStackProps } from '../../src';

/** Synthesizes a ServerlessStack in a fresh app and returns its manifests. */
export function synthStack(props: ServerlessStackProps = {}): any[] {
  return Testing.synth(new ServerlessStack(Testing.app(), 'serverless', props));
}

/** The one object of a kind and name; fails the test when there is not exactly one. */
export function find(objects: readonly any[], kind: string, name?: string): any {
  const found = objects.filter(o => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0];
}

/** The env of a container as a name-to-value map. */
export function envOf(container: any): Record<string, any> {
  return Object.fromEntries((container.env ?? []).map((e: any) => [e.name, e.value ?? e.valueFrom]));
}
