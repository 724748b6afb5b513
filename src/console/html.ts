/**
 * HTML written by the console: every value put into a template is escaped
 * unless it is HTML this module made (`SafeHtml`), so a prompt, a name or any
 * text from outside shows as text, never as markup.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or as a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A value in a template: HTML made here as it is, a list item by item, nothing for null, undefined and false, anything else as escaped text. */
function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** A template whose values are escaped (see `render`). Attributes must be quoted. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/**
 * A value as JSON inside `<script type="application/json">`: `<`, `>`, `&` and the two line separators JavaScript
 * reads differently are written as escapes, so no text can close the element or start markup.
 */
export function jsonInScript(value: unknown): SafeHtml {
  const json = JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return new SafeHtml(json);
}
