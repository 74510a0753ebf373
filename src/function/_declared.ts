/**
 * Constructs declared in a file rather than in code (function folders): their synth problems
 * name the file, and their props by the keys of that file.
 */
import { IConstruct } from 'constructs';

/** The name of the settings file of a function folder (here, not in function-folder.ts, for `validate`, which loads no construct). */
export const FUNCTION_FILE = 'function.yaml';

/**
 * The type of the construct metadata entry that names the file a Function was declared in
 * (such as a function folder's `function.yaml`); problems found at synth name that file too.
 */
export const DECLARED_IN_METADATA = 'cdk8s-kyma-serverless:declared-in';

/**
 * The type of the construct metadata entry that names the key of that file a construct comes from,
 * such as `expose`, or the prop of its parent construct, such as KymaFunction's `keda`.
 */
export const DECLARED_AS_METADATA = 'cdk8s-kyma-serverless:declared-as';

/**
 * The type of the construct metadata entry that names the function folder a Function's source was
 * read from: problems of the source name the folder's file at fault, and fixes a folder can make.
 */
export const DECLARED_FOLDER_METADATA = 'cdk8s-kyma-serverless:declared-folder';

/**
 * Problems as a construct declared in a file, or by a prop of another construct, reports them:
 * the file first, and each prop named by its key in the file or its parent's prop (`'host'` of
 * the `expose` key becomes `'expose.host'`, `'maxReplicas'` of KymaFunction's `keda` `'keda.maxReplicas'`).
 *
 * @param construct the construct, with its metadata
 * @param problems its problems, each starting with the prop in quotes
 */
export function declaredProblems(construct: IConstruct, problems: readonly string[]): string[] {
  const file = construct.node.metadata.find(m => m.type === DECLARED_IN_METADATA)?.data;
  const key = construct.node.metadata.find(m => m.type === DECLARED_AS_METADATA)?.data;
  return problems.map(p => `${file ? `${String(file)}: ` : ''}${key ? p.replace(/^'/, `'${String(key)}.`) : p}`);
}
