import ts from 'typescript';

/** A string in the source that reads as words for a person: where, and its text (`${…}` shown as `{}`). */
export interface Literal {
  file: string;
  line: number;
  text: string;
}

/** Logger methods: the operator's log stays English, whatever the member's language. */
const LOG_METHODS = new Set(['debug', 'info', 'warn', 'error', 'trace', 'fatal']);

/**
 * Functions whose string arguments go to the operator's log, never to a member: `acknowledge(label, …)` (the label of
 * a first answer in the log), `logError(error, what)`, a bound logger `log(…)`, `withTimeout(…, message)` (an error),
 * `logJobFailure(logger, error, fields, message)` (a failed or refused job's line).
 */
const LOGGING_CALLS = new Set(['acknowledge', 'logError', 'log', 'withTimeout', 'logJobFailure']);

/**
 * Whether a string reads as words for a person: two words of letters (any script) side by side, or one capitalised
 * word ("Cancel", "Retry") — not an identifier, a key, a path, a URL, a MIME type or an API method.
 */
export function readsAsWords(text: string): boolean {
  const stripped = text
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/`[^`]*`/g, ' ')
    .replace(/\{\}/g, ' ');
  if (/\p{L}{2,}[,;:!?’'…]?\s+\p{L}{2,}/u.test(stripped)) return true;
  return /^\s*[\p{Lu}][\p{Ll}]{2,}[.!?…]*\s*$/u.test(stripped);
}

/** Where a literal sits that makes it no sentence for a member: a log line, a thrown error, a key, a type, an import. */
function exempt(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isExternalModuleReference(parent)) return true;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isPropertySignature(parent) || ts.isMethodDeclaration(parent)) && parent.name === node) return true;
  if (ts.isElementAccessExpression(parent) && parent.argumentExpression === node) return true;
  if (ts.isLiteralTypeNode(parent)) return true;
  for (let at: ts.Node | undefined = parent; at && !ts.isSourceFile(at); at = at.parent) {
    if (ts.isCallExpression(at) && ts.isPropertyAccessExpression(at.expression) && LOG_METHODS.has(at.expression.name.text)) return true;
    if (ts.isCallExpression(at) && LOGGING_CALLS.has(calleeName(at.expression))) return true;
    // Errors go to the log and to whoever reads a stack trace (the operator); members' errors carry catalog words (their constructors take no string).
    if (ts.isNewExpression(at) && /Error$/.test(at.expression.getText())) return true;
    if (ts.isFunctionLike(at) || ts.isBlock(at)) break;
  }
  return false;
}

function calleeName(expression: ts.Expression): string {
  const name = ts.isIdentifier(expression) ? expression.text : ts.isPropertyAccessExpression(expression) ? expression.name.getText() : '';
  return name.replace(/^#/, '');
}

/** Every string literal and template of `source` that reads as words for a person and is not exempt (`exempt`). */
export function userFacingLiterals(file: string, source: string): Literal[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Literal[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const text = ts.isTemplateExpression(node) ? node.head.text + node.templateSpans.map((span) => `{}${span.literal.text}`).join('') : node.text;
      // Lua run in Redis is code, not words.
      if (!exempt(node) && readsAsWords(text) && !text.includes('redis.call')) found.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1, text });
      if (ts.isTemplateExpression(node)) node.templateSpans.forEach((span) => visit(span.expression));
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}
