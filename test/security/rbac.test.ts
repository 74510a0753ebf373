/**
 * Least privilege: every ServiceAccount's effective RBAC permissions, in the committed output and
 * in stacks synthesized with other options, must be exactly the reviewed lines of
 * test/fixtures/rbac-allow-list.yaml. Any widening fails here, and so does a line the allow-list
 * keeps after the output stopped granting it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { parse } from 'yaml';
import { Registry, ServerlessRelease, WebhookCertificates } from '../../src';
import { fixture, loadYamlDocuments } from '../util/fixtures';
import { readTree } from '../util/project-copy';
import { synthStack } from '../util/synth';

const ROOT = path.resolve(__dirname, '..', '..');
const ALLOW_LIST_FILE = 'test/fixtures/rbac-allow-list.yaml';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
/** What a rule line says when the rule has no resourceNames. */
const ANY_NAME = '*any*';
/** Verbs that let an account grant itself (or act as) more than it has. */
const ESCALATING_VERBS = ['escalate', 'bind', 'impersonate'];

/**
 * A set of objects that is deployed together: one environment folder of dist/, or one synthesized stack.
 * A stack of another release than the default is reviewed apart: its accounts are keyed
 * `<namespace>/<serviceaccount>@<release>` in the allow-list.
 */
interface Source {
  readonly name: string;
  readonly objects: readonly any[];
  readonly release?: ServerlessRelease;
}

/** The allow-list key of an account of a source. */
function accountKey(account: string, source: Pick<Source, 'release'>): string {
  return source.release ? `${account}@${source.release}` : account;
}

/** One ServiceAccount bound to one role, in one scope (`cluster` or `namespace <ns>`). */
interface Grant {
  readonly account: string;
  readonly scope: string;
  readonly role: any;
  readonly binding: string;
}

interface Permissions {
  /** Lines of each ServiceAccount, by `<namespace>/<name>`; every emitted ServiceAccount is here, with or without lines. */
  readonly accounts: Map<string, Set<string>>;
  readonly grants: Grant[];
  /** Bindings whose permissions cannot be known or reviewed from the output. */
  readonly problems: string[];
}

/** Lines of each account, with the sources that grant each line. */
type Granted = Map<string, Map<string, string[]>>;

type AllowList = Record<string, string[]>;

function describeObject(o: any): string {
  return `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;
}

function roleKey(kind: string, namespace: string | undefined, name: string): string {
  return kind === 'Role' ? `Role ${namespace}/${name}` : `ClusterRole ${name}`;
}

function quoteGroup(group: string): string {
  return group === '' ? '""' : group;
}

/** One line per (scope, apiGroup, resource, resourceName, verb) of a rule. */
function ruleLines(scope: string, rule: any): string[] {
  const verbs: string[] = rule.verbs ?? [];
  if (rule.nonResourceURLs?.length) {
    return rule.nonResourceURLs.flatMap((url: string) => verbs.map(verb => `${scope} | nonResourceURL | ${url} | ${verb}`));
  }
  const names: string[] = rule.resourceNames?.length ? rule.resourceNames : [ANY_NAME];
  return (rule.apiGroups ?? []).flatMap((group: string) => (rule.resources ?? []).flatMap((resource: string) =>
    names.flatMap(name => verbs.map(verb => `${scope} | ${quoteGroup(group)} | ${resource} | ${name} | ${verb}`))));
}

/** Follows every binding of a ServiceAccount to its role and expands the role's rules. */
function effectivePermissions(objects: readonly any[]): Permissions {
  const roles = new Map<string, any>();
  const accounts = new Map<string, Set<string>>();
  const grants: Grant[] = [];
  const problems: string[] = [];
  for (const o of objects) {
    if (o.kind === 'Role' || o.kind === 'ClusterRole') roles.set(roleKey(o.kind, o.metadata.namespace, o.metadata.name), o);
    if (o.kind === 'ServiceAccount') {
      if (!o.metadata.namespace) problems.push(`${describeObject(o)} has no namespace`);
      accounts.set(`${o.metadata.namespace}/${o.metadata.name}`, new Set());
    }
  }
  for (const binding of objects.filter(o => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')) {
    const id = describeObject(binding);
    const ref = binding.roleRef ?? {};
    const namespaced = binding.kind === 'RoleBinding';
    if (ref.apiGroup !== RBAC_GROUP || !['Role', 'ClusterRole'].includes(ref.kind) || (!namespaced && ref.kind === 'Role')) {
      problems.push(`${id} has an invalid roleRef ${JSON.stringify(ref)}`);
      continue;
    }
    const role = roles.get(roleKey(ref.kind, binding.metadata.namespace, ref.name));
    if (!role) {
      problems.push(`${id} binds ${ref.kind} ${ref.name}, which is not in the output (a built-in role such as cluster-admin, admin, edit or view?): `
        + 'its permissions cannot be reviewed here; bind a Role or ClusterRole of our own with exactly the rules needed');
      continue;
    }
    if (role.aggregationRule) {
      problems.push(`${id} binds ${describeObject(role)}, an aggregated ClusterRole whose rules other ClusterRoles fill in: its permissions cannot be reviewed here`);
      continue;
    }
    const scope = namespaced ? `namespace ${binding.metadata.namespace}` : 'cluster';
    for (const subject of binding.subjects ?? []) {
      if (subject.kind !== 'ServiceAccount') {
        problems.push(`${id} binds ${subject.kind} ${subject.name}: only ServiceAccounts may be bound, so that every permission is reviewed per account`);
        continue;
      }
      if (!subject.namespace) {
        problems.push(`${id} binds ServiceAccount ${subject.name} without a namespace`);
        continue;
      }
      const account = `${subject.namespace}/${subject.name}`;
      if (!accounts.has(account)) accounts.set(account, new Set());
      grants.push({ account, scope, role, binding: id });
      for (const rule of role.rules ?? []) for (const line of ruleLines(scope, rule)) accounts.get(account)!.add(line);
    }
  }
  return { accounts, grants, problems };
}

/** The lines of every account over all sources, with the sources that grant each. */
function granted(sources: readonly Source[]): Granted {
  const result: Granted = new Map();
  for (const source of sources) {
    for (const [name, lines] of effectivePermissions(source.objects).accounts) {
      const account = accountKey(name, source);
      if (!result.has(account)) result.set(account, new Map());
      const byLine = result.get(account)!;
      for (const line of lines) byLine.set(line, [...(byLine.get(line) ?? []), source.name]);
    }
  }
  return result;
}

function sortedEntries<T>(map: Map<string, T>): [string, T][] {
  return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Lines granted to known accounts that their allow-list entries lack, by account. */
function widenings(actual: Granted, allow: AllowList): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const [account, lines] of sortedEntries(actual)) {
    if (!(account in allow)) continue;
    const known = new Set(allow[account]);
    const added = [...lines.keys()].filter(line => !known.has(line)).sort();
    if (added.length) result.set(account, added);
  }
  return result;
}

/** Allow-listed lines no source grants any more, by account (all of them for an account that is gone). */
function staleLines(actual: Granted, allow: AllowList): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const account of Object.keys(allow).sort()) {
    const lines = actual.get(account);
    const stale = allow[account].filter(line => !lines?.has(line));
    if (stale.length || !lines) result.set(account, stale);
  }
  return result;
}

function withSources(actual: Granted, account: string, line: string): string {
  return `    - ${line}  # ${actual.get(account)!.get(line)!.join(', ')}`;
}

function wideningReport(actual: Granted, allow: AllowList): string {
  const added = widenings(actual, allow);
  if (!added.size) return '';
  return [
    `Permissions widened. Review each new line below; if it is intended, add it to ${ALLOW_LIST_FILE} (sorted):`,
    ...[...added].flatMap(([account, lines]) => [`  ${account}:`, ...lines.map(line => withSources(actual, account, line))]),
  ].join('\n');
}

function staleReport(actual: Granted, allow: AllowList): string {
  const stale = staleLines(actual, allow);
  if (!stale.size) return '';
  return [
    `The allow-list grants more than the output does. Remove these from ${ALLOW_LIST_FILE}:`,
    ...[...stale].flatMap(([account, lines]) => actual.has(account)
      ? [`  ${account}:`, ...lines.map(line => `    - ${line}`)]
      : [`  ${account}: (no such ServiceAccount in any output any more: remove the whole entry)`]),
  ].join('\n');
}

function unknownAccountsReport(actual: Granted, allow: AllowList): string {
  const unknown = sortedEntries(actual).filter(([account]) => !(account in allow));
  if (!unknown.length) return '';
  return [
    `ServiceAccounts ${ALLOW_LIST_FILE} does not know. Review their permissions and, if intended, add them:`,
    ...unknown.flatMap(([account, lines]) => lines.size
      ? [`  ${account}:`, ...[...lines.keys()].sort().map(line => withSources(actual, account, line))]
      : [`  ${account}: []`]),
  ].join('\n');
}

/** Why a role's rules may be wider than any allow-list can make acceptable. */
function wildcardProblems(role: any): string[] {
  const problems: string[] = [];
  for (const [i, rule] of (role.rules ?? []).entries()) {
    for (const field of ['apiGroups', 'resources', 'verbs', 'resourceNames', 'nonResourceURLs']) {
      const wild = (rule[field] ?? []).filter((v: string) => v.includes('*'));
      if (wild.length) problems.push(`${describeObject(role)} rule ${i}: ${field} ${JSON.stringify(wild)} is a wildcard; name exactly what is needed`);
    }
    const escalating = (rule.verbs ?? []).filter((v: string) => ESCALATING_VERBS.includes(v));
    if (escalating.length) problems.push(`${describeObject(role)} rule ${i}: verbs ${JSON.stringify(escalating)} let the account grant itself, or act with, more permissions than it has`);
  }
  return problems;
}

/** Grants that let an account read every Secret of its scope (list or watch, no resourceNames) and are not allow-listed. */
function secretReadProblems(objects: readonly any[], allow: AllowList, release?: ServerlessRelease): string[] {
  const { grants } = effectivePermissions(objects);
  const problems: string[] = [];
  for (const role of objects.filter(o => o.kind === 'Role' || o.kind === 'ClusterRole')) {
    for (const [i, rule] of (role.rules ?? []).entries()) {
      const readsAll = (rule.resources ?? []).includes('secrets') && !rule.resourceNames?.length
        && (rule.verbs ?? []).some((v: string) => v === 'list' || v === 'watch');
      if (!readsAll) continue;
      const bound = grants.filter(g => g.role === role);
      if (!bound.length) problems.push(`${describeObject(role)} rule ${i} reads every Secret but is bound to no ServiceAccount, so no allow-list entry covers it`);
      for (const grant of bound) {
        const missing = ruleLines(grant.scope, { ...rule, resources: ['secrets'] })
          .filter(line => / \| (list|watch)$/.test(line) && !(allow[accountKey(grant.account, { release })] ?? []).includes(line));
        if (missing.length) {
          problems.push(`${describeObject(role)} rule ${i} lets ${grant.account} read every Secret (${grant.scope}) through ${grant.binding}: `
            + `${missing.join('; ')}. Restrict it with resourceNames, or review it and add the lines to ${ALLOW_LIST_FILE}`);
        }
      }
    }
  }
  return problems;
}

/** Every `.k8s.yaml` of dist/, one source per environment folder (read as test/main.test.ts does). */
function distSources(): Source[] {
  const dist = path.join(ROOT, 'dist');
  const manifests = Object.keys(readTree(dist)).filter(f => f.endsWith('.k8s.yaml'));
  const folders = [...new Set(manifests.map(f => path.dirname(f)))].sort();
  return folders.map(folder => ({
    name: folder === '.' ? 'dist/' : `dist/${folder}`,
    objects: manifests.filter(f => path.dirname(f) === folder).flatMap(f => loadYamlDocuments(path.join(dist, f))),
  }));
}

/** Stacks with options that change RBAC (or might), beyond what dist/ shows. */
function synthesizedSources(): Source[] {
  return [
    { name: 'synthStack(webhook certManager)', objects: synthStack({ webhook: { certificates: WebhookCertificates.certManager() } }) },
    { name: 'synthStack(webhook disabled)', objects: synthStack({ webhook: { enabled: false } }) },
    { name: 'synthStack(external registry)', objects: synthStack({ registry: Registry.external({ secretName: 'x' }) }) },
    { name: 'synthStack(2 controllers)', objects: synthStack({ controller: { replicas: 2 } }) },
    ...[
      { name: 'synthStack(1.13.0)', props: {} },
      { name: 'synthStack(1.13.0, webhook certManager)', props: { webhook: { certificates: WebhookCertificates.certManager() } } },
      { name: 'synthStack(1.13.0, 2 controllers)', props: { controller: { replicas: 2 } } },
    ].map(({ name, props }) => ({ name, release: ServerlessRelease.V1_13_0, objects: synthStack({ ...props, release: ServerlessRelease.V1_13_0 }) })),
  ];
}

function loadAllowList(): AllowList {
  return parse(fs.readFileSync(fixture('rbac-allow-list.yaml'), 'utf8')) ?? {};
}

/** Source files under src/, relative to the project. */
function sourceFiles(): string[] {
  return fs.readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter(f => f.endsWith('.ts'))
    .map(f => path.join('src', f))
    .sort();
}

function calleeName(expression: ts.Expression): string {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return expression.name.text;
  return '';
}

function property(object: ts.ObjectLiteralExpression, name: string): ts.PropertyAssignment | undefined {
  return object.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === name);
}

/**
 * RBAC rules in a source file that no `//` comment explains. A rule is the object literal of a
 * `rules` array of a KubeRole or KubeClusterRole (or of any object literal of kind Role or
 * ClusterRole). Its explanation is the line(s) right above the object, or right above its first
 * property when the object opens on a line of its own.
 */
function uncommentedRules(file: string, text: string): { rules: number; problems: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines = text.split('\n');
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line;
  const commentAbove = (line: number) => {
    let i = line - 1;
    while (i >= 0 && lines[i].trim() === '') i--;
    return i >= 0 && lines[i].trim().startsWith('//');
  };
  const problems: string[] = [];
  let rules = 0;
  const checkRoleProps = (props: ts.Node | undefined, what: string, at: ts.Node) => {
    const where = `${file}:${lineOf(at) + 1}`;
    if (!props || !ts.isObjectLiteralExpression(props)) {
      problems.push(`${where}: the props of ${what} are not an object literal; its rules cannot be checked`);
      return;
    }
    const rulesProperty = property(props, 'rules');
    if (!rulesProperty) return;
    if (!ts.isArrayLiteralExpression(rulesProperty.initializer)) {
      problems.push(`${file}:${lineOf(rulesProperty) + 1}: the rules of ${what} are not an array literal; write each rule here, with its comment`);
      return;
    }
    for (const element of rulesProperty.initializer.elements) {
      rules++;
      const line = lineOf(element);
      if (!ts.isObjectLiteralExpression(element)) {
        problems.push(`${file}:${line + 1}: a rule of ${what} is not an object literal; write it here, with its comment`);
        continue;
      }
      const first = element.properties[0];
      const explained = commentAbove(line) || (first !== undefined && lineOf(first) > line && commentAbove(lineOf(first)));
      if (!explained) problems.push(`${file}:${line + 1}: a rule of ${what} has no // comment saying why it is needed`);
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && /^Kube(Cluster)?Role$/.test(calleeName(node.expression))) {
      checkRoleProps(node.arguments?.[2], calleeName(node.expression), node);
    } else if (ts.isObjectLiteralExpression(node)) {
      const kind = property(node, 'kind')?.initializer;
      if (kind && ts.isStringLiteral(kind) && ['Role', 'ClusterRole'].includes(kind.text) && property(node, 'rules')) {
        checkRoleProps(node, `a ${kind.text} object`, node);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { rules, problems };
}

/** Fails with the report as it is, so that its lines can be copied (expect().toBe('') would escape the quotes). */
function expectNoProblems(report: string): void {
  if (report) throw new Error(report);
}

const allow = loadAllowList();
const sources = [...distSources(), ...synthesizedSources()];
const actual = granted(sources);

describe('RBAC least privilege', () => {
  test('reads every environment of dist/ and each synthesized variant', () => {
    expect(sources.map(s => s.name)).toEqual([
      'dist/', 'dist/dev', 'dist/prod',
      'synthStack(webhook certManager)', 'synthStack(webhook disabled)', 'synthStack(external registry)', 'synthStack(2 controllers)',
      'synthStack(1.13.0)', 'synthStack(1.13.0, webhook certManager)', 'synthStack(1.13.0, 2 controllers)',
    ]);
    for (const source of sources) expect(`${source.name}: ${source.objects.some(o => o.kind === 'ClusterRoleBinding')}`).toBe(`${source.name}: true`);
  });

  test('every binding binds ServiceAccounts to a role of the output, whose permissions can be reviewed', () => {
    const problems = sources.flatMap(s => effectivePermissions(s.objects).problems.map(p => `${s.name}: ${p}`));
    expectNoProblems(problems.join('\n'));
  });

  test(`${ALLOW_LIST_FILE} is a sorted list of unique lines per ServiceAccount`, () => {
    const problems = Object.entries(allow).flatMap(([account, lines]) => {
      if (!/^[a-z0-9-]+\/[a-z0-9.-]+(@\d+\.\d+\.\d+)?$/.test(account)) return [`${account}: not a <namespace>/<serviceaccount>[@<release>] key`];
      if (!Array.isArray(lines) || lines.some(l => typeof l !== 'string')) return [`${account}: not a list of strings`];
      const sorted = [...new Set(lines)].sort();
      return JSON.stringify(sorted) === JSON.stringify(lines) ? [] : [`${account}: not sorted, or has duplicates; should be:\n${sorted.map(l => `  - ${l}`).join('\n')}`];
    });
    expectNoProblems(problems.join('\n'));
  });

  test('every ServiceAccount is in the allow-list', () => {
    expectNoProblems(unknownAccountsReport(actual, allow));
  });

  test('no ServiceAccount has a permission the allow-list lacks (a widening)', () => {
    expectNoProblems(wideningReport(actual, allow));
  });

  test('the allow-list has no line the output no longer grants (stale)', () => {
    expectNoProblems(staleReport(actual, allow));
  });

  test('no role has a wildcard or an escalating verb (escalate, bind, impersonate)', () => {
    const problems = sources.flatMap(s => s.objects.filter(o => o.kind === 'Role' || o.kind === 'ClusterRole')
      .flatMap(wildcardProblems).map(p => `${s.name}: ${p}`));
    expectNoProblems(problems.join('\n'));
  });

  test('no role lets an account list or watch every Secret unless that is allow-listed', () => {
    const problems = sources.flatMap(s => secretReadProblems(s.objects, allow, s.release).map(p => `${s.name}: ${p}`));
    expectNoProblems(problems.join('\n'));
  });

  test('every RBAC rule in src/ has a comment saying why', () => {
    const results = sourceFiles().map(f => uncommentedRules(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    // Finding no rule at all would mean the scan is broken, not that all is well.
    expect(results.reduce((n, r) => n + r.rules, 0)).toBeGreaterThan(0);
    expectNoProblems(results.flatMap(r => r.problems).join('\n'));
  });
});

describe('the RBAC checks bite', () => {
  const dist = sources[0];
  // The committed dist/ itself is the reviewed state here, so these tests do not depend on the fixture.
  const baseline: AllowList = Object.fromEntries(sortedEntries(granted([dist])).map(([account, lines]) => [account, [...lines.keys()].sort()]));
  const webhookAccount = 'kyma-system/serverless-webhook';
  const listAllSecrets = 'namespace kyma-system | "" | secrets | *any* | list';
  /** dist/ with an edit to a deep copy of its objects, compared with the committed allow-list. */
  const seeded = (edit: (objects: any[]) => void) => {
    const objects = structuredClone(dist.objects) as any[];
    edit(objects);
    return { objects, actual: granted([{ name: 'seeded', objects }]) };
  };
  const webhookRole = (objects: any[]) => objects.find(o => o.kind === 'Role' && o.metadata.name === 'serverless-webhook');

  test('a seeded `list secrets` on a Role is reported as a widening of exactly that line, and as a read of every Secret', () => {
    expect(effectivePermissions(dist.objects).accounts.get(webhookAccount)).not.toContain(listAllSecrets);
    const { objects, actual: widened } = seeded(o => webhookRole(o).rules.push({ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }));
    expect(widened.get(webhookAccount)!.has(listAllSecrets)).toBe(true);
    expect(widenings(widened, baseline)).toEqual(new Map([[webhookAccount, [listAllSecrets]]]));
    const report = wideningReport(widened, baseline);
    expect(report).toContain(`  ${webhookAccount}:\n    - ${listAllSecrets}  # seeded`);
    expect(report).toContain(`add it to ${ALLOW_LIST_FILE}`);
    expect(secretReadProblems(objects, baseline)).toEqual([expect.stringContaining(`Role kyma-system/serverless-webhook rule 2 lets ${webhookAccount} read every Secret`)]);
    // The seed was a copy.
    expect(webhookRole(dist.objects as any[]).rules).toHaveLength(2);
  });

  test('a removed rule leaves stale lines, reported for removal', () => {
    const { actual: narrowed } = seeded(o => webhookRole(o).rules.shift());
    expect(staleLines(narrowed, baseline).get(webhookAccount)).toEqual(['namespace kyma-system | "" | secrets | *any* | create']);
    expect(staleReport(narrowed, baseline)).toContain(`Remove these from ${ALLOW_LIST_FILE}`);
  });

  test('a binding to a built-in ClusterRole, a new ServiceAccount, a wildcard and an escalating verb are each reported', () => {
    const { objects, actual: seededActual } = seeded(o => {
      o.push({
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'x', namespace: 'kyma-system' },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'edit' },
        subjects: [{ kind: 'ServiceAccount', name: 'serverless-webhook', namespace: 'kyma-system' }],
      });
      o.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'newcomer', namespace: 'kyma-system' } });
      webhookRole(o).rules.push({ apiGroups: ['*'], resources: ['pods'], verbs: ['get', 'impersonate'] });
    });
    expect(effectivePermissions(objects).problems).toEqual([expect.stringContaining('RoleBinding kyma-system/x binds ClusterRole edit, which is not in the output')]);
    expect(unknownAccountsReport(seededActual, baseline)).toContain('  kyma-system/newcomer: []');
    expect(wildcardProblems(webhookRole(objects))).toEqual([
      expect.stringContaining('apiGroups ["*"] is a wildcard'),
      expect.stringContaining('verbs ["impersonate"]'),
    ]);
  });

  test('the comment scan finds rules without a comment, one-line or multi-line, and rules it cannot see', () => {
    const text = [
      'const role = new k8s.KubeClusterRole(this, \'R\', {',
      '  rules: [',
      '    // Why the first.',
      '    { apiGroups: [\'\'], resources: [\'a\'], verbs: [\'get\'] },',
      '    { apiGroups: [\'\'], resources: [\'b\'], verbs: [\'get\'] }, // trailing comments do not count',
      '    {',
      '      apiGroups: [\'\'],',
      '      resources: [\'c\'],',
      '    },',
      '    {',
      '      // Why the fourth, inside the object.',
      '      apiGroups: [\'\'],',
      '    },',
      '  ],',
      '});',
      'new KubeRole(this, \'S\', { rules: someRules() });',
      'new ApiObject(this, \'T\', { kind: \'Role\', rules: [{ apiGroups: [\'\'] }] });',
      'new KubeRoleBinding(this, \'U\', { rules: [{ apiGroups: [\'\'] }] });',
    ].join('\n');
    expect(uncommentedRules('x.ts', text).problems).toEqual([
      'x.ts:5: a rule of KubeClusterRole has no // comment saying why it is needed',
      'x.ts:6: a rule of KubeClusterRole has no // comment saying why it is needed',
      'x.ts:16: the rules of KubeRole are not an array literal; write each rule here, with its comment',
      'x.ts:17: a rule of a Role object has no // comment saying why it is needed',
    ]);
  });
});
