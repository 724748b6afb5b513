import { afterEach, describe, expect, it } from 'vitest';
import { finishedJob, startHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a prompt on Slack', () => {
  it('reaches the image service as the member typed it: mentions, channels, links, <, > and &', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.setName('C0ART', 'art');
    fake.setName('U0SAM', 'sam');
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0SAM'] });
    const prompt = 'a poster for @sam and @designers in #art: fish & chips <3, "a > b", see https://example.com/menu?a=1&b=2 --quality low';
    const sent = fake.commandText(prompt, { escape: true });
    expect(sent).toContain('<@U0SAM|sam>');
    expect(sent).toContain('<!subteam^S0DESIGN|@designers>');
    expect(sent).toContain('<#C0ART|art>');
    expect(sent).toContain('<https://example.com/menu?a=1&amp;b=2>');
    expect(sent).toContain('fish &amp; chips &lt;3');
    await fake.command({ command: '/imagine', text: sent, user: 'U0ALICE', channel: 'C0ART' });
    await finishedJob(fake, 'C0ART');
    expect(h.emulator.requests.map((r) => r.fields?.prompt)).toEqual(['a poster for @sam and @designers in #art: fish & chips <3, "a > b", see https://example.com/menu?a=1&b=2']);
  });

  it('reaches it as typed from a mention too: message text is always escaped, links carry what was typed', async () => {
    h = await startHarness();
    const { fake } = h;
    // As Slack sends "@Pictor a sign that says fish & chips <3 for @sam, example.com --quality low".
    await fake.userMessage({ channel: 'C0ART', text: `<@${fake.botUserId}> a sign that says fish &amp; chips &lt;3 for <@U0SAM|sam>, <http://example.com|example.com> --quality low` });
    await finishedJob(fake, 'C0ART');
    expect(h.emulator.requests.map((r) => r.fields?.prompt)).toEqual(['a sign that says fish & chips <3 for @sam, example.com']);
  });

  it('shows a mention Slack sent without its name (`<#C0123|>`, `<@U0123>`, `<!subteam^S0123>`) by its id, never an empty name', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a banner for <#C0ART|> by <@U0SAM> and <!subteam^S0DESIGN> --quality low', user: 'U0ALICE', channel: 'C0ART' });
    await finishedJob(fake, 'C0ART');
    expect(h.emulator.requests.map((r) => r.fields?.prompt)).toEqual(['a banner for #C0ART by @U0SAM and @S0DESIGN']);
  });
});
