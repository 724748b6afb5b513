import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { CATALOGS, LOCALES, say, type Locale, type MessageKey } from '../../../bots/runner/index.js';

/** What a message needs: its placeholders by kind, and for each select the choices it names. */
interface Shape {
  args: Map<string, string>;
  selects: Map<string, Set<string>>;
}

function shapeOf(message: string): Shape {
  const shape: Shape = { args: new Map(), selects: new Map() };
  const walk = (elements: MessageFormatElement[]) => {
    for (const el of elements) {
      switch (el.type) {
        case TYPE.argument:
        case TYPE.number:
        case TYPE.date:
        case TYPE.time:
          shape.args.set(el.value, el.type === TYPE.argument ? 'text' : 'number');
          break;
        case TYPE.plural:
          shape.args.set(el.value, 'number');
          for (const option of Object.values(el.options)) walk(option.value);
          break;
        case TYPE.select: {
          shape.args.set(el.value, 'select');
          const keys = shape.selects.get(el.value) ?? new Set<string>();
          for (const [key, option] of Object.entries(el.options)) {
            keys.add(key);
            walk(option.value);
          }
          shape.selects.set(el.value, keys);
          break;
        }
        case TYPE.tag:
          shape.args.set(`<${el.value}>`, 'tag');
          walk(el.children);
          break;
        default:
          break;
      }
    }
  };
  walk(parse(message));
  return shape;
}

/** The markup a message writes as it is, which a translation keeps exactly: `code` spans, Slack *bold* names, :emoji: codes and pictographs (📭, ⬇️). A set: a plural a language folds says one twice. */
function markupOf(message: string): Set<string> {
  return new Set(message.match(/`[^`]+`|\*[^*\s][^*]*\*|:[a-z0-9_+-]+:|\p{Extended_Pictographic}\uFE0F?/gu) ?? []);
}

/** Every problem of a catalog against the English one: keys missing or extra, placeholders missing, extra or of another kind, select choices English does not have, markup missing or changed, ASCII apostrophes. */
export function catalogProblems(source: Readonly<Record<string, string>>, catalog: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(source)) if (!(key in catalog)) problems.push(`${key}: missing`);
  for (const key of Object.keys(catalog)) if (!(key in source)) problems.push(`${key}: not in the English catalog`);
  for (const [key, english] of Object.entries(source)) {
    const message = catalog[key];
    if (message === undefined) continue;
    let shape: Shape;
    try {
      shape = shapeOf(message);
    } catch (error) {
      problems.push(`${key}: does not parse (${String(error)})`);
      continue;
    }
    if (message.includes("'")) problems.push(`${key}: an ASCII apostrophe (ICU’s escape character); write ’`);
    const want = shapeOf(english);
    for (const [name, kind] of want.args) {
      if (!shape.args.has(name)) problems.push(`${key}: placeholder {${name}} missing`);
      // A number English counts with a plural may be shown as it is where the language has no plural (Japanese).
      else if (shape.args.get(name) !== kind && !(kind === 'number' && shape.args.get(name) === 'text')) problems.push(`${key}: {${name}} is a ${shape.args.get(name)}, in English a ${kind}`);
    }
    for (const name of shape.args.keys()) if (!want.args.has(name)) problems.push(`${key}: placeholder {${name}} is not in English`);
    for (const [name, keys] of shape.selects) {
      const known = want.selects.get(name) ?? new Set<string>();
      for (const choice of keys) if (!known.has(choice)) problems.push(`${key}: {${name}} has a choice “${choice}” English does not have`);
    }
    const markup = markupOf(message);
    const wantMarkup = markupOf(english);
    for (const mark of wantMarkup) if (!markup.has(mark)) problems.push(`${key}: markup “${mark}” missing`);
    for (const mark of markup) if (!wantMarkup.has(mark)) problems.push(`${key}: markup “${mark}” is not in English`);
  }
  return problems;
}

/** Values that reach every branch a message has: each select's choices in turn, numbers 0, 1, 2 and 5 for plurals. */
function samplesOf(message: string): Record<string, string | number>[] {
  const shape = shapeOf(message);
  const base: Record<string, string | number> = {};
  for (const [name, kind] of shape.args) if (!name.startsWith('<')) base[name] = kind === 'number' ? 2 : kind === 'select' ? 'other' : `‹${name}›`;
  const samples = [base];
  for (const [name, kind] of shape.args) {
    if (kind === 'number') for (const n of [0, 1, 5]) samples.push({ ...base, [name]: n });
    for (const choice of shape.selects.get(name) ?? []) if (kind === 'select') samples.push({ ...base, [name]: choice });
  }
  return samples;
}

describe('the message catalogs', () => {
  const english = CATALOGS.en as Readonly<Record<string, string>>;

  it.each(LOCALES.filter((l) => l !== 'en'))('%s has every English key and no other, with the same placeholders and markup', (locale) => {
    expect(catalogProblems(english, CATALOGS[locale] as Readonly<Record<string, string>>)).toEqual([]);
  });

  it('English parses, and no message writes an ASCII apostrophe', () => {
    expect(catalogProblems(english, english)).toEqual([]);
  });

  it.each(LOCALES)('%s says every message in every branch without a placeholder left unfilled', (locale: Locale) => {
    for (const [key, message] of Object.entries(CATALOGS[locale])) {
      for (const values of samplesOf(message)) {
        const said = say(locale, key as MessageKey, values);
        expect(said, `${locale} ${key}`).not.toMatch(/[{}]/);
      }
    }
  });

  it.each(LOCALES)('%s never writes a Discord command’s name out: a sentence names it as the reader’s Discord shows it (`/{imagineSettings}`)', (locale: Locale) => {
    // The commands whose English name is not a word of the sentence around it; each as registered in every language.
    const commands = ['settings', 'usage', 'history', 'admin'] as const;
    const names = new Set(commands.flatMap((command) => LOCALES.map((l) => say(l, `discord.command.${command}.name`))));
    for (const [key, message] of Object.entries(CATALOGS[locale])) {
      for (const name of names) expect(message, `${locale} ${key}`).not.toContain(`/${name}`);
    }
  });

  it('reports a missing key, a missing or extra placeholder, a placeholder of another kind and a misspelt choice', () => {
    const source = { a: 'Hello {name}', b: 'By {who}', c: '{scope, select, server {server} other {workspace}}', d: 'plain', f: '{n, plural, one {# image} other {# images}}' };
    expect(catalogProblems(source, { a: 'Hallo', b: 'Von {who, plural, one {#} other {#}}', c: '{scope, select, sever {Server} other {Workspace}}', e: 'x', f: '{n} 枚' })).toEqual([
      'd: missing',
      'e: not in the English catalog',
      'a: placeholder {name} missing',
      'b: {who} is a number, in English a text',
      'c: {scope} has a choice “sever” English does not have',
    ]);
    expect(catalogProblems({ a: 'Hi' }, { a: 'Hi {who}' })).toEqual(['a: placeholder {who} is not in English']);
    expect(catalogProblems({ a: 'Hi' }, { a: "l'image" })).toEqual(['a: an ASCII apostrophe (ICU’s escape character); write ’']);
  });

  it('reports markup English writes that a translation drops or changes: a `code` span, a Slack *bold* name, a :emoji: and a pictograph', () => {
    const source = { a: '📭 Update it from `manifest.json`.', b: ':lock: Use *Edit image*.', c: '{n, plural, one {⏳ # job} other {⏳ # jobs}}' };
    expect(catalogProblems(source, { a: 'Aktualisiere es aus manifest.json.', b: ':lock: Nimm *Bild bearbeiten*.', c: '{n, plural, other {⏳ # 件}}' })).toEqual([
      'a: markup “📭” missing',
      'a: markup “`manifest.json`” missing',
      'b: markup “*Edit image*” missing',
      'b: markup “*Bild bearbeiten*” is not in English',
    ]);
  });
});
