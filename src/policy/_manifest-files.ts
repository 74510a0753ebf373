/**
 * Reading a folder of manifests: which files, in which order, and their YAML documents. Shared by
 * `validate` (and synth's check) and `apply`, so both read a folder the same way.
 */
import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
// Types only: the parsers load when a file is read, so synth, which checks its output in memory, loads neither.
import type * as JsYaml from 'js-yaml';
import type * as Yaml from 'yaml';
import { readWrittenYaml } from './_written-yaml';

/**
 * The manifest files of a folder: `*.yaml` and `*.yml` in name order (with `recursive`, a
 * subfolder's files where the subfolder's name sorts), Kustomize's `kustomization.yaml` aside.
 *
 * @param dir the folder
 * @param recursive whether to read subfolders too
 * @returns the paths, `dir` joined with each file's path in it
 */
export function manifestFiles(dir: string, recursive: boolean): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) {
        if (recursive) walk(full);
      } else if (/\.ya?ml$/.test(entry.name) && !/^kustomization\.ya?ml$/.test(entry.name)) {
        found.push(full);
      }
    }
  };
  walk(dir);
  return found;
}

/** The text of a manifest file, and whether it is printable ASCII and line breaks only. */
export interface ManifestText {
  readonly text: string;
  readonly printableAscii: boolean;
}

/**
 * Reads a manifest file (UTF-8): its bytes tell printable ASCII faster than its text can, and such
 * bytes are the same text in Latin-1, which needs no decoding.
 *
 * @param file the file's path
 */
export function readManifestFile(file: string): ManifestText {
  const bytes = fs.readFileSync(file);
  const printableAscii = isPrintableAscii(bytes);
  return { text: bytes.toString(printableAscii ? 'latin1' : 'utf8'), printableAscii };
}

/** Whether bytes are printable ASCII and line breaks only, by the engine's searches of bytes. */
function isPrintableAscii(bytes: Buffer): boolean {
  if (!isAscii(bytes)) return false;
  for (let byte = 0; byte < 0x20; byte++) if (byte !== 0x0a && bytes.includes(byte)) return false;
  return !bytes.includes(0x7f);
}

/**
 * The documents of a YAML file, each parsed or with its error. A file as synth writes it is read by
 * a reader of that writer's shapes, which gives what js-yaml gives (see `_written-yaml.ts`) in a
 * fraction of its time, without loading js-yaml unless a scalar may be a number it leaves to
 * js-yaml's types; any other by js-yaml (YAML 1.2 core schema, as `yaml` reads it), which is
 * four times faster than `yaml` on the large CRD documents; when js-yaml refuses the file, the
 * `yaml` package parses it again to tell which document is broken and why.
 *
 * @param text the file's text
 * @param printableAscii whether it holds printable ASCII and line breaks only, when the caller knows ({@link readManifestFile})
 */
export function parseManifests(text: string, printableAscii?: boolean): { object?: any; error?: string }[] {
  const written = readWrittenYaml(text, jsYaml, printableAscii);
  if (written) return written.map(object => ({ object }));
  try {
    const js = jsYaml();
    return js.loadAll(text, undefined, { schema: js.CORE_SCHEMA }).map(object => ({ object }));
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('yaml') as typeof Yaml).parseAllDocuments(text).map(document => (document.errors.length
      ? { error: document.errors[0].message }
      : { object: document.toJS() }));
  }
}

/** js-yaml, loaded when a file needs it: the files synth writes need it only for a plain scalar that may be a number (such as `1.5`). */
function jsYaml(): typeof JsYaml {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('js-yaml') as typeof JsYaml;
}
