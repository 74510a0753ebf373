/**
 * The API report: every name each entry point of the package exports (`cdk8s-kyma-serverless`
 * and its sub-paths, package.json `exports`), with its kind and signature, read with the
 * TypeScript compiler as users' code sees it (`@internal` members left out, as `stripInternal`
 * leaves them out of the published types). The report is committed under api-report/, one file an
 * entry; a test compares it with this output, so every change of the public surface shows in review.
 *
 *   npx ts-node --transpile-only scripts/api-report.ts            # check: exits 1 when a report differs
 *   npx ts-node --transpile-only scripts/api-report.ts --write    # write api-report/
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..');

/** An entry point of the package. */
export interface Entry {
  /** How users import it. */
  readonly importPath: string;
  /** Its sub-path in package.json `exports`. */
  readonly subpath: string;
  /** Its source, from the repository's root. */
  readonly source: string;
  /** Its report, from the repository's root. */
  readonly report: string;
}

/** The entry points: the constructs, the Function API for users' own tools, and the test kit. */
export const ENTRIES: readonly Entry[] = [
  { importPath: 'cdk8s-kyma-serverless', subpath: '.', source: 'src/index.ts', report: 'api-report/cdk8s-kyma-serverless.api.md' },
  { importPath: 'cdk8s-kyma-serverless/api', subpath: './api', source: 'src/api/index.ts', report: 'api-report/cdk8s-kyma-serverless-api.api.md' },
  { importPath: 'cdk8s-kyma-serverless/testing', subpath: './testing', source: 'src/testing/index.ts', report: 'api-report/cdk8s-kyma-serverless-testing.api.md' },
];

const FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope | ts.TypeFormatFlags.WriteClassExpressionAsTypeLiteral;

function isInternal(declaration: ts.Declaration | undefined): boolean {
  return !!declaration && ts.getJSDocTags(declaration).some(t => t.tagName.text === 'internal')
    || !!declaration && /@internal\b/.test(declaration.getFullText().slice(0, declaration.getLeadingTriviaWidth()));
}

function isHidden(symbol: ts.Symbol): boolean {
  const declaration = symbol.declarations?.[0];
  if (!declaration) return false;
  const modifiers = ts.canHaveModifiers(declaration) ? ts.getModifiers(declaration) ?? [] : [];
  return symbol.name.startsWith('_') || symbol.name.startsWith('__') || isInternal(declaration)
    || modifiers.some(m => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword)
    || ((declaration as ts.NamedDeclaration).name !== undefined && ts.isPrivateIdentifier((declaration as ts.NamedDeclaration).name!));
}

/** The lines of one exported name. */
function describe(checker: ts.TypeChecker, name: string, symbol: ts.Symbol): string[] {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const declaration = target.declarations?.[0];
  const typeText = (type: ts.Type, at?: ts.Node) => checker.typeToString(type, at, FORMAT);
  const member = (m: ts.Symbol, isStatic: boolean): string[] => {
    const d = m.valueDeclaration ?? m.declarations?.[0];
    // Members inherited from other packages (Construct's node, Chart's toJson) are theirs to report.
    if (isHidden(m) || m.flags & ts.SymbolFlags.Prototype || d?.getSourceFile().fileName.includes('/node_modules/')) return [];
    const prefix = isStatic ? 'static ' : '';
    const type = checker.getTypeOfSymbol(m);
    if (m.flags & ts.SymbolFlags.Method) {
      return type.getCallSignatures().map(s => `  ${prefix}${m.name}${checker.signatureToString(s, d, FORMAT)}`);
    }
    const readonly = d && ts.canHaveModifiers(d) && ts.getModifiers(d)?.some(x => x.kind === ts.SyntaxKind.ReadonlyKeyword) ? 'readonly ' : '';
    const optional = m.flags & ts.SymbolFlags.Optional ? '?' : '';
    return [`  ${prefix}${readonly}${m.name}${optional}: ${typeText(type, d)}`];
  };
  const heritage = (d: ts.ClassDeclaration | ts.InterfaceDeclaration) => (d.heritageClauses ?? []).map(h => ` ${h.getText()}`).join('').replace(/\s+/g, ' ');
  const typeParameters = (d: ts.ClassDeclaration | ts.InterfaceDeclaration | ts.TypeAliasDeclaration) => (d.typeParameters ? `<${d.typeParameters.map(p => p.getText()).join(', ')}>` : '');
  const lines: string[] = [];
  if (declaration && ts.isClassDeclaration(declaration)) {
    const abstract = ts.getModifiers(declaration)?.some(m => m.kind === ts.SyntaxKind.AbstractKeyword) ? 'abstract ' : '';
    lines.push(`${abstract}class ${name}${typeParameters(declaration)}${heritage(declaration)}`);
    const staticType = checker.getTypeOfSymbol(target);
    for (const m of checker.getPropertiesOfType(staticType).sort(byName)) lines.push(...member(m, true));
    for (const s of staticType.getConstructSignatures()) {
      const ctor = s.declaration && ts.isConstructorDeclaration(s.declaration) ? s.declaration : undefined;
      if (ctor && (isInternal(ctor) || ts.getModifiers(ctor)?.some(m => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword))) continue;
      lines.push(`  constructor(${s.parameters.map(p => parameter(checker, p)).join(', ')})`);
    }
    const instance = checker.getDeclaredTypeOfSymbol(target);
    for (const m of checker.getPropertiesOfType(instance).sort(byName)) lines.push(...member(m, false));
  } else if (declaration && ts.isInterfaceDeclaration(declaration)) {
    lines.push(`interface ${name}${typeParameters(declaration)}${heritage(declaration)}`);
    const type = checker.getDeclaredTypeOfSymbol(target);
    for (const m of checker.getPropertiesOfType(type).sort(byName)) lines.push(...member(m, false));
    for (const s of type.getCallSignatures()) lines.push(`  ${checker.signatureToString(s, declaration, FORMAT)}`);
    for (const i of checker.getIndexInfosOfType(type)) lines.push(`  ${i.isReadonly ? 'readonly ' : ''}[key: ${typeText(i.keyType)}]: ${typeText(i.type)}`);
  } else if (declaration && ts.isEnumDeclaration(declaration)) {
    lines.push(`enum ${name}`);
    for (const m of declaration.members) lines.push(`  ${m.name.getText()}${m.initializer ? ` = ${m.initializer.getText()}` : ''}`);
  } else if (declaration && ts.isTypeAliasDeclaration(declaration)) {
    lines.push(`type ${name}${typeParameters(declaration)} = ${declaration.type.getText().replace(/\s+/g, ' ')}`);
  } else if (declaration && ts.isFunctionDeclaration(declaration)) {
    for (const s of checker.getTypeOfSymbol(target).getCallSignatures()) lines.push(`function ${name}${checker.signatureToString(s, declaration, FORMAT)}`);
  } else if (declaration && ts.isVariableDeclaration(declaration)) {
    // A long literal (a program's text, a pattern) says nothing in review that its type does not.
    const type = checker.getTypeOfSymbol(target);
    const text = typeText(type, declaration);
    lines.push(`const ${name}: ${text.length > 120 ? typeText(checker.getBaseTypeOfLiteralType(type), declaration) : text}`);
  } else if (declaration && ts.isModuleDeclaration(declaration)) {
    lines.push(`namespace ${name}`);
  } else {
    lines.push(`${ts.SymbolFlags[target.flags] ?? 'symbol'} ${name}`);
  }
  const where = declaration ? path.relative(ROOT, declaration.getSourceFile().fileName).split(path.sep).join('/') : '?';
  return [`${lines[0]}    // ${where}`, ...lines.slice(1)];
}

function parameter(checker: ts.TypeChecker, p: ts.Symbol): string {
  const d = p.valueDeclaration as ts.ParameterDeclaration | undefined;
  const optional = d && (d.questionToken || d.initializer) ? '?' : '';
  return `${d?.dotDotDotToken ? '...' : ''}${p.name}${optional}: ${checker.typeToString(checker.getTypeOfSymbol(p), d, FORMAT)}`;
}

function byName(a: ts.Symbol, b: ts.Symbol): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The reports of every entry, by report file. */
export function apiReports(): Map<string, string> {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.build.json'), ts.sys.readFile);
  const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const program = ts.createProgram(ENTRIES.map(e => path.join(ROOT, e.source)), { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const reports = new Map<string, string>();
  for (const entry of ENTRIES) {
    const source = program.getSourceFile(path.join(ROOT, entry.source));
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${entry.source}: not a module`);
    const all = checker.getExportsOfModule(moduleSymbol).sort(byName);
    const internal = (s: ts.Symbol) => isInternal((s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).declarations?.[0]);
    // stripInternal removes an @internal declaration from the published types: a name the entry
    // exports by name from it is a broken export of the .d.ts users' compilers read (`export *` just leaves it out).
    const stripped = all.filter(s => s.flags & ts.SymbolFlags.Alias && internal(s));
    if (stripped.length) throw new Error(`${entry.source} exports @internal declarations by name, which the published types leave out: ${stripped.map(s => s.name).join(', ')}`);
    const exports = all.filter(s => !internal(s));
    const body = exports.map(s => describe(checker, s.name, s).join('\n')).join('\n\n');
    reports.set(entry.report, [
      `# API report of \`${entry.importPath}\``,
      '',
      `Generated from ${entry.source} by scripts/api-report.ts (\`npx ts-node --transpile-only scripts/api-report.ts --write\`); do not edit.`,
      `${exports.length} exported names. A change here is a change of what users import: say it in CHANGELOG.md.`,
      '',
      '```ts',
      body,
      '```',
      '',
    ].join('\n'));
  }
  return reports;
}

if (require.main === module) {
  const reports = apiReports();
  const stale: string[] = [];
  for (const [file, text] of reports) {
    const at = path.join(ROOT, file);
    if (process.argv.includes('--write')) {
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, text);
    } else if (!fs.existsSync(at) || fs.readFileSync(at, 'utf8') !== text) {
      stale.push(file);
    }
  }
  if (stale.length) {
    process.stderr.write(`the public API changed: ${stale.join(', ')}; run scripts/api-report.ts --write and commit the result\n`);
    process.exitCode = 1;
  }
}
