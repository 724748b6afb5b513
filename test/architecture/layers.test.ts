import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * The rooms of bots/README.md ("A request goes one way through four rooms … a room only calls the room to its right")
 * and the edges around them, measured on every import of every .ts file of src/, bots/ and nodes/.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Which room a file is in: the first that matches. */
const ROOMS: readonly [room: string, path: RegExp][] = [
  ['main', /^bots\/main\.ts$/],
  ['discord', /^bots\/discord\//],
  ['slack', /^bots\/slack\//],
  ['runner', /^bots\/runner\//],
  ['state', /^bots\/state\//],
  ['shared', /^bots\/[^/]+\.ts$/],
  ['src', /^src\//],
  ['nodes', /^nodes\//],
];

/**
 * What each room may import: rooms (`core` is the core by the package's names, `pictor` and `pictor/internal`), and
 * packages (`*`: any; Node's own modules always). Anything else is a break of the rule named here.
 */
const RULES: Record<string, { rule: string; rooms: readonly string[]; packages: readonly string[] | '*' }> = {
  main: { rule: 'main.ts opens every room', rooms: ['main', 'discord', 'slack', 'runner', 'state', 'shared', 'core'], packages: '*' },
  discord: { rule: 'a surface calls rightward and never the other surface', rooms: ['discord', 'shared', 'runner', 'state', 'core'], packages: '*' },
  slack: { rule: 'a surface calls rightward and never the other surface', rooms: ['slack', 'shared', 'runner', 'state', 'core'], packages: '*' },
  shared: { rule: 'what the surfaces share reaches into no surface', rooms: ['shared', 'runner', 'state', 'core'], packages: '*' },
  runner: { rule: 'the runner imports only the core, the state room, zod, sharp and intl-messageformat', rooms: ['runner', 'state', 'core'], packages: ['zod', 'sharp', 'intl-messageformat'] },
  state: { rule: 'the state room calls only the core', rooms: ['state', 'core'], packages: '*' },
  src: { rule: 'the core imports nothing of bots/ or nodes/', rooms: ['src'], packages: '*' },
  nodes: { rule: 'nodes/ reaches the core only through the package entries', rooms: ['nodes', 'core'], packages: '*' },
};

const CORE_ENTRIES: Record<string, string> = { pictor: 'src/index.ts', 'pictor/internal': 'src/internal.ts' };

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const roomOf = (file: string) => ROOMS.find(([, path]) => path.test(file))?.[0] ?? 'outside';

/** A relative import's file (`./x.js` is `./x.ts`, a folder its index.ts), from the repository's root. */
function resolveLocal(from: string, specifier: string): string {
  const base = relative(root, resolve(root, dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((path) => path.endsWith('.ts') && existsSync(join(root, path))) ?? base;
}

const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
const isNodeOwn = (specifier: string) => specifier.startsWith('node:') || builtinModules.includes(specifier);

interface Import {
  from: string;
  specifier: string;
  /** The file it reaches, when it is one of ours. */
  file: string | undefined;
  room: string;
  /** Only types are imported: gone once compiled, so no cycle at run time (a room's rule counts it still). */
  typesOnly: boolean;
}

/** The specifiers a file imports or re-exports types only from (`import type`, every name `type`, `export type … from`). */
function typeOnlySpecifiers(from: string, text: string): Set<string> {
  const kinds = new Map<string, boolean>();
  for (const statement of ts.createSourceFile(from, text, ts.ScriptTarget.Latest).statements) {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) || !statement.moduleSpecifier || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    let typesOnly: boolean;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const named = clause?.namedBindings;
      typesOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)));
    } else {
      const clause = statement.exportClause;
      typesOnly = statement.isTypeOnly || (!!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
    }
    const specifier = statement.moduleSpecifier.text;
    kinds.set(specifier, (kinds.get(specifier) ?? true) && typesOnly);
  }
  return new Set([...kinds].filter(([, typesOnly]) => typesOnly).map(([specifier]) => specifier));
}

const files = ['src', 'bots', 'nodes'].flatMap(sourceFiles);
const imports: Import[] = files.flatMap((from) => {
  const text = readFileSync(join(root, from), 'utf8');
  const typesOnly = typeOnlySpecifiers(from, text);
  return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName: specifier }): Import => {
    const kind = { from, specifier, typesOnly: typesOnly.has(specifier) };
    if (specifier.startsWith('.')) {
      const file = resolveLocal(from, specifier);
      return { ...kind, file, room: roomOf(file) };
    }
    if (CORE_ENTRIES[specifier]) return { ...kind, file: CORE_ENTRIES[specifier], room: 'core' };
    return { ...kind, file: undefined, room: isNodeOwn(specifier) ? 'node' : 'package' };
  });
});

function breaksOfRules(): string[] {
  return imports.flatMap(({ from, specifier, room }) => {
    const rules = RULES[roomOf(from)];
    if (!rules) return [`a file outside the rooms: ${from}`];
    const allowed =
      room === 'node' || (room === 'package' ? rules.packages === '*' || rules.packages.includes(packageName(specifier)) : rules.rooms.includes(room));
    return allowed ? [] : [`${rules.rule}: ${from} → ${specifier}`];
  });
}

/**
 * Each cycle of imports among our files that are there at run time (Tarjan's strongly connected components), as its
 * files in order. Types only are left out, as dependency-cruiser leaves them out by default: nothing of them is loaded.
 */
function cycles(): string[][] {
  const edges = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const { from, file, typesOnly } of imports) if (file && !typesOnly && edges.has(file)) edges.get(from)!.push(file);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of edges.get(file)!) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do component.push((member = stack.pop()!));
    while (member !== file);
    if (component.length > 1 || edges.get(file)!.includes(file)) found.push(component.reverse());
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the rooms of the code', () => {
  it('reads the imports of every file it measures', () => {
    // A reader that found nothing would pass every rule.
    expect(files.length).toBeGreaterThan(300);
    expect(imports.filter((i) => i.from === 'bots/main.ts' && i.room === 'runner').length).toBeGreaterThan(0);
  });

  it('calls only to the right: each import of each room is one its rule allows', () => {
    expect(breaksOfRules()).toEqual([]);
  });

  it('has no cycle of imports in src/, bots/ and nodes/ at run time', () => {
    expect(cycles().map((cycle) => cycle.join(' → '))).toEqual([]);
  });
});
