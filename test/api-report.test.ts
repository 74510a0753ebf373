/**
 * The public surface is deliberate and visible: api-report/ holds every name each entry exports,
 * with its signature, and must be what scripts/api-report.ts prints from the sources now. A change
 * of what users import shows in review as a change of api-report/ (and needs a CHANGELOG.md line).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ENTRIES, apiReports } from '../scripts/api-report';

const ROOT = path.resolve(__dirname, '..');

// The compiler reads the sources and their dependencies' types: seconds, more on a busy machine.
const COMPILE_BUDGET_MS = 120_000;

describe('the API report', () => {
  let reports: Map<string, string>;
  beforeAll(() => {
    reports = apiReports();
  }, COMPILE_BUDGET_MS);

  test.each(ENTRIES.map(e => [e.importPath, e.report] as const))('of %s is committed as generated (run scripts/api-report.ts --write)', (_entry, report) => {
    expect(reports.get(report)).toBe(fs.readFileSync(path.join(ROOT, report), 'utf8'));
  });

  test('the construct entry exports what the docs show and keeps the Function API\'s internals behind cdk8s-kyma-serverless/api', () => {
    const names = (report: string) => new Set([...reports.get(report)!.matchAll(/^(?:abstract )?(?:class|interface|enum|function|const|type) (\w+)/gm)].map(m => m[1]));
    const main = names(ENTRIES[0].report);
    const api = names(ENTRIES[1].report);
    for (const name of ['ServerlessStack', 'FunctionNamespace', 'KymaFunction', 'FunctionRuntime', 'FunctionSource', 'GitOpsApp', 'FunctionFolder', 'Exposure', 'EndpointAuth']) {
      expect(`${name}: ${main.has(name)}`).toBe(`${name}: true`);
    }
    for (const name of ['validateFunction', 'functionSchema', 'SchemaValidator', 'parseQuantity', 'FUNCTION_RULES']) {
      expect(`${name}: ${main.has(name)} ${api.has(name)}`).toBe(`${name}: false true`);
    }
    // The GitOps health checks and Flux stages (issue 34) brought the entry to 151: room for a few more, not for the Function API.
    expect(main.size).toBeLessThan(160);
  });

  test('the Function API entry names what policy code uses, not the helpers our own programs share', () => {
    const api = new Set([...reports.get(ENTRIES[1].report)!.matchAll(/^(?:abstract )?(?:class|interface|enum|function|const|type) (\w+)/gm)].map(m => m[1]));
    for (const name of ['validateFunction', 'functionWarnings', 'handlerCodeViolations', 'validateApiRule', 'validateSubscription', 'defaultFunction', 'functionCrdSpec', 'runtimeNotice', 'functionChangeOf']) {
      expect(`${name}: ${api.has(name)}`).toBe(`${name}: true`);
    }
    // A field's check for a construct's prop, a schema builder, the local runtime's contract, the webhook's env defaults, the CLI's words.
    for (const name of ['hostProblems', 'string', 'runtimeContract', 'withServerDefaults', 'functionChangeTitle']) {
      expect(`${name}: ${api.has(name)}`).toBe(`${name}: false`);
    }
    // 135 names after its index named them (issue 37; 269 through `export *` before).
    expect(api.size).toBeLessThan(150);
  });
});
