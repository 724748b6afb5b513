import { describe, expect, it } from 'vitest';
import { findBlockedWord, parseWordList } from '../../../bots/runner/index.js';
import { unmatchableEntries } from '../../../bots/runner/blocked-words.js';
import { GORE_VARIANTS } from '../../helpers/blocked-word-variants.js';

/** A list an operator might keep, with words whose look-alike skeletons would catch ordinary ones (rn → m, cl → d). */
const BLOCKED = ['gore', 'bum', 'modem', 'dam', 'cafe', 'sun', 'greg', 'ass', 'cop', 'kill', 'blood', 'nude', 'corpse', 'кровь', 'убить', 'αίμα', 'σφαγή'];

/**
 * Ordinary words and names in Latin, Cyrillic and Greek script, as Node's Unicode data (CLDR, through Intl) names
 * countries, currencies, languages, months and days in twelve languages, with a few sentences and names beside.
 */
function ordinaryTexts(): string[] {
  const locales = ['en', 'fr', 'de', 'es', 'it', 'pl', 'tr', 'ru', 'uk', 'bg', 'sr-Cyrl', 'el'];
  const regionCodes: string[] = [];
  for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) regionCodes.push(String.fromCharCode(a, b));
  const languageCodes = ['en', 'fr', 'de', 'es', 'it', 'pl', 'tr', 'ru', 'uk', 'bg', 'sr', 'el', 'ja', 'zh', 'ko', 'ar', 'he', 'hi', 'pt', 'nl', 'sv', 'fi', 'da', 'cs', 'hu', 'ro', 'hr', 'lt', 'lv', 'et', 'ga', 'cy', 'eu', 'ca', 'is', 'mk', 'be', 'ka', 'hy', 'kk', 'mn', 'fa', 'th', 'vi', 'id', 'sw', 'yo', 'zu'];
  const texts: string[] = [];
  for (const locale of locales) {
    const regions = new Intl.DisplayNames([locale], { type: 'region', fallback: 'none' });
    for (const code of regionCodes) {
      try {
        const name = regions.of(code);
        if (name) texts.push(name);
      } catch {
        // Not a region code this ICU knows.
      }
    }
    const currencies = new Intl.DisplayNames([locale], { type: 'currency', fallback: 'none' });
    for (const code of Intl.supportedValuesOf('currency')) texts.push(currencies.of(code) ?? '');
    const languages = new Intl.DisplayNames([locale], { type: 'language', fallback: 'none' });
    for (const code of languageCodes) texts.push(languages.of(code) ?? '');
    for (let month = 0; month < 12; month++) texts.push(new Intl.DateTimeFormat(locale, { month: 'long', timeZone: 'UTC' }).format(Date.UTC(2024, month, 15)));
    for (let day = 0; day < 7; day++) texts.push(new Intl.DateTimeFormat(locale, { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2024, 0, 1 + day)));
  }
  texts.push(
    'a gorge at sunset',
    'Gregory and Greta in the cafeteria',
    'burn the modern barn at dawn, corn and horn',
    'a stern turn in the morning; learn to journey',
    'a damp clam in Amsterdam, a dame and a damsel',
    'a bumblebee on a bump, the burnt umber of a drum',
    'classic glass, a passing assessment of the cops and copper',
    'a killer whale, a kiln, a blooded hound, a nuder palette',
    'Gordon, Goran, Georgina, Marnie, Vernon, Arnold, Bernard, Cornelius, Ramona, Damian, Corinna',
    'Горный закат над морем, кафе у дороги и старый сад',
    'Мария, Сергей, Егор, Ольга, Борис, Григорий и Анна пьют чай',
    'Кровать у окна, убитый горем кот спит',
    'Ηλιοβασίλεμα στο φαράγγι, ένα καφέ δίπλα στη θάλασσα',
    'Γιώργος, Μαρία, Ελένη, Νίκος και Σοφία περπατούν στην αγορά',
    'Αιματηρός ουρανός; όχι, απλώς κόκκινος',
  );
  return texts.filter((text) => text !== '');
}

describe('findBlockedWord', () => {
  it('matches whole words and phrases whatever the case, accents or compatibility forms', () => {
    expect(findBlockedWord('A CAFÉ at night', ['cafe'])).toBe('cafe');
    expect(findBlockedWord('a cafe\u0301', ['Café'])).toBe('Café');
    expect(findBlockedWord('ｇｏｒｅ', ['gore'])).toBe('gore');
    expect(findBlockedWord('the red,  FOX.', ['red fox'])).toBe('red fox');
  });

  it('matches a word split by invisible characters (zero-width space, soft hyphen, zero-width joiner)', () => {
    expect(findBlockedWord('go\u200Bre', ['gore'])).toBe('gore');
    expect(findBlockedWord('go\u00ADre', ['gore'])).toBe('gore');
    expect(findBlockedWord('a red fo\u200Dx', ['red fox'])).toBe('red fox');
  });

  it.each(GORE_VARIANTS)('refuses "gore" written with $how', ({ text }) => {
    expect(findBlockedWord(`a ${text} scene`, ['gore'])).toBe('gore');
  });

  it('reads blocked entries written in look-alike letters the same way: a Cyrillic entry refuses its Latin look-alike and the other way round', () => {
    expect(findBlockedWord('a gore scene', ['g\u043Ere'])).toBe('g\u043Ere');
    expect(findBlockedWord('a \u0441\u043E\u0440 here', ['cop'])).toBe('cop');
    expect(findBlockedWord('КРОВЬ на снегу', ['кровь'])).toBe('кровь');
  });

  it('does not match inside other words or across a word in between', () => {
    expect(findBlockedWord('a classic glass', ['ass'])).toBeUndefined();
    expect(findBlockedWord('a redfox', ['red fox'])).toBeUndefined();
    expect(findBlockedWord('a red little fox', ['red fox'])).toBeUndefined();
  });

  it('folds one letter to one letter only: a blocked "bum" never refuses "burn", nor "modem" "modern", nor "dam" "clam"', () => {
    expect(findBlockedWord('burn it', ['bum'])).toBeUndefined();
    expect(findBlockedWord('a modern house', ['modem'])).toBeUndefined();
    expect(findBlockedWord('a clam', ['dam'])).toBeUndefined();
  });

  it('matches words of scripts written without spaces (Japanese, Chinese, Thai) inside a prompt, characters in a row', () => {
    const blocked = ['殺す', '血', 'gore', 'ฆ่า'];
    expect(findBlockedWord('猫を殺す絵', blocked)).toBe('殺す');
    expect(findBlockedWord('血まみれの猫', blocked)).toBe('血');
    expect(findBlockedWord('血 の 猫', blocked)).toBe('血');
    expect(findBlockedWord('杀人', ['杀'])).toBe('杀');
    expect(findBlockedWord('ฆ่าแมว', blocked)).toBe('ฆ่า');
    expect(findBlockedWord('猫の絵', blocked)).toBeUndefined();
    expect(findBlockedWord('殺風景な部屋', blocked)).toBeUndefined();
  });

  it('matches an emoji or symbol wherever it stands, in any skin tone', () => {
    expect(findBlockedWord('a 🍆 on a plate', ['🍆'])).toBe('🍆');
    expect(findBlockedWord('a🍆', ['🍆'])).toBe('🍆');
    expect(findBlockedWord('thumbs 👍🏽', ['👍'])).toBe('👍');
    expect(findBlockedWord('a plum on a plate', ['🍆'])).toBeUndefined();
  });

  it.each(['kill + him', 'kill 🔪 him', 'kill=him', 'kill|him', 'kill 👍🏽 him', 'KILL🔪HIM', 'kill ❤️ him'])(
    'passes over an emoji or symbol between the words of a phrase made of letters only, as over punctuation: "kill him" refuses "%s"',
    (prompt) => {
      expect(findBlockedWord(`please ${prompt} now`, ['kill him'])).toBe('kill him');
    },
  );

  it('still matches an entry holding an emoji or symbol as written, and still needs the words of a phrase in a row', () => {
    expect(findBlockedWord('kill 🔪 him', ['kill 🔪'])).toBe('kill 🔪');
    expect(findBlockedWord('kill 👍 him', ['kill 🔪'])).toBeUndefined();
    expect(findBlockedWord('a + b', ['+'])).toBe('+');
    expect(findBlockedWord('a 🍆🔪 b', ['🍆 🔪'])).toBe('🍆 🔪');
    expect(findBlockedWord('kill the 🔪 him', ['kill him'])).toBeUndefined();
    expect(findBlockedWord('猫を🔪殺す絵', ['殺す'])).toBe('殺す');
    expect(findBlockedWord('殺🔪す', ['殺す'])).toBe('殺す');
    expect(findBlockedWord('thumbs 👍🏽', ['👍'])).toBe('👍');
  });

  it('refuses none of a few thousand ordinary words and names in Latin, Cyrillic and Greek script', () => {
    const texts = ordinaryTexts();
    const words = new Set(texts.flatMap((text) => text.split(/\s+/)));
    expect(words.size).toBeGreaterThan(3000);
    const refused = texts.filter((text) => findBlockedWord(text, BLOCKED) !== undefined);
    expect(refused).toEqual([]);
  });
});

describe('parseWordList', () => {
  it('splits on commas and new lines, dropping blanks and repeats by their folded form', () => {
    expect(parseWordList(' gore,, Café ,cafe\nred   fox ')).toEqual(['gore', 'Café', 'red fox']);
  });

  it('keeps emoji and entries in unspaced scripts, and keeps an entry that could never match for the reader to refuse', () => {
    expect(parseWordList('殺す, 血, 🍆, gore, ...')).toEqual(['殺す', '血', '🍆', 'gore', '...']);
    expect(unmatchableEntries(['殺す', '🍆', 'gore', '...', '—'])).toEqual(['...', '—']);
  });

  it('takes a look-alike spelling of an entry already listed as a repeat', () => {
    expect(parseWordList('gore, g\u043Ere, go\u3164re')).toEqual(['gore']);
  });
});
