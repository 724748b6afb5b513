import { describe, expect, it } from 'vitest';
import { escapeHtml, html, jsonInScript } from '../../src/console/html.js';

describe('the console’s HTML', () => {
  it('escapes every value put into a template, in text and in quoted attributes', () => {
    const prompt = '<img src=x onerror=alert(1)>';
    const name = `"><script>alert('x')</script>`;
    const out = html`<td title="${name}">${prompt}</td>`.value;
    expect(out).toBe('<td title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;">&lt;img src=x onerror=alert(1)&gt;</td>');
    expect(escapeHtml('a & b')).toBe('a &amp; b');
  });

  it('keeps HTML it made itself, renders lists item by item, and nothing for undefined, null and false', () => {
    const rows = ['<a>', 'b'].map((v) => html`<li>${v}</li>`);
    expect(html`<ul>${rows}</ul>${undefined}${null}${false}${0}`.value).toBe('<ul><li>&lt;a&gt;</li><li>b</li></ul>0');
  });

  it('writes JSON for a script data block that no text can close or turn into markup', () => {
    const json = jsonInScript({ prompt: '</script><script>alert(1)</script>', line: '\u2028' }).value;
    expect(json).not.toContain('</script>');
    expect(json).not.toContain('<');
    expect(JSON.parse(json)).toEqual({ prompt: '</script><script>alert(1)</script>', line: '\u2028' });
  });
});
