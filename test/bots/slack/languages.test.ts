import { afterEach, describe, expect, it } from 'vitest';
import { anyOf, say } from '../../../bots/runner/index.js';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { buttonsOf, type FakeMessage } from '../../fakes/slack/slack-objects.js';
import { RecordingLogger } from '../discord/harness.js';
import { actionMessages, hasButton, imageShares, jobMessages, startHarness, statusOf, type Harness } from './harness.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

const ADMIN_DE = 'U0HANS';
const ADMIN_JA = 'U0YUKI';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(logger = new RecordingLogger()): Promise<Harness> {
  const harness = await startHarness({ limits: { userDailyUsd: 0.05 }, controls: { maxImagesPerJob: 2 }, bot: { adminUserIds: [ADMIN_DE, ADMIN_JA] }, logger });
  harness.fake.setLocale(ADMIN_DE, 'de-DE');
  harness.fake.setLocale(ADMIN_JA, 'ja-JP');
  return harness;
}

/** `/imagine …` and its private answer: in the acknowledgement, or through the response URL. */
async function privately(fake: FakeSlack, text: string, user: string): Promise<string> {
  const ack = await fake.command({ command: '/imagine', text, user });
  const inAck = (ack.body as { text?: string } | undefined)?.text;
  if (inAck) return inAck;
  const response = await fake.waitFor(() => fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), `the answer to /imagine ${text}`);
  expect(response.body.response_type).toBe('ephemeral');
  return String(response.body.text);
}

/** The job message of a channel once it shows its end (no Cancel), in whatever language. */
function ended(fake: FakeSlack, channel: string, done: RegExp): Promise<FakeMessage> {
  return fake.waitFor(() => jobMessages(fake, channel).find((m) => done.test(statusOf(m)) && !hasButton(m, 'pictor_cancel')), `the job in ${channel} to end`);
}

describe('a member’s language on Slack (users.info with include_locale)', () => {
  it('a German member: refusals with German plurals and dollars, the finished job, a flag error and the settings view in German; Slack asked once; the log in English', async () => {
    const logger = new RecordingLogger();
    h = await start(logger);
    const { fake } = h;

    expect(await privately(fake, 'ein Fuchs --n 4 --quality low', ADMIN_DE)).toBe('Hier sind höchstens 2 Bilder pro Auftrag möglich; fordere weniger an.');
    expect(await privately(fake, 'ein Fuchs --quality high', ADMIN_DE)).toMatch(/^Dieser Auftrag könnte bis zu 0,\d{3}\s\$ kosten, mehr als die 0,0500\s\$, die von deinem Tagesbudget von 0,0500\s\$ übrig sind/);
    expect(await privately(fake, 'ein Fuchs --size 999', ADMIN_DE)).toBe('`--size 999` ist nicht erlaubt: --size nimmt 1024x1024, 1024x1536, 1536x1024; außerdem square (= 1024x1024), portrait (= 1024x1536), landscape (= 1536x1024).');
    expect(fake.messages).toHaveLength(0);

    await fake.command({ command: '/imagine', text: 'ein Fuchs --quality low', user: ADMIN_DE, channel: 'C0DE' });
    const job = await ended(fake, 'C0DE', /^:white_check_mark: Fertig · /);
    expect(job.text).toMatch(/^Pictor: fertig \(1024x1024 · low · png · 0,0\d{3}\s\$ · (\d+\sms|\d+(,\d)?\sSek\.)\)$/);
    expect(statusOf(job)).toMatch(/^:white_check_mark: Fertig · 1024x1024 · low · png · 0,0\d{3}\s\$ · (\d+\sms|\d+(,\d)?\sSek\.) · das Bild ist unten gepostet, mit Neu erstellen, Bearbeiten und Löschen$/);
    const header = (job.blocks![0] as { text: { text: string } }).text.text;
    expect(header).toBe(`<@${ADMIN_DE}> wünscht sich: “ein Fuchs”  \`--quality low\``);
    const caption = await fake.waitFor(() => imageShares(fake, 'C0DE')[0], 'the images');
    expect(caption.text).toMatch(new RegExp(`^<@${ADMIN_DE}> hier ist dein Bild: `));
    const actions = await fake.waitFor(() => actionMessages(fake, 'C0DE')[0], 'the buttons');
    expect(buttonsOf(actions).map((b) => b.text)).toEqual(['Neu erstellen', 'Bearbeiten', 'Löschen']);

    const settings = await privately(fake, 'admin settings', ADMIN_DE);
    expect(settings.split('\n')[0]).toBe('Einstellungen dieses Workspace — woher jede stammt: Betreiber (die Umgebung des Bots), Admin (hier festgelegt), Standard.');
    expect(settings).toContain('• max-images: 2 (Betreiber)');
    // Setting words are typed as in English; the answer is German.
    expect(await privately(fake, 'admin set max-images 1', ADMIN_DE)).toBe(':white_check_mark: max-images ist jetzt 1 (vorher der Standard).');

    // One look-up for the member, kept for every later answer.
    expect(fake.callsOf('users.info').filter((c) => c.args.user === ADMIN_DE)).toHaveLength(1);
    expect(fake.callsOf('users.info')[0]!.args.include_locale).toBe('true');
    const log = logger.text();
    // The refusals' lines (the runner's), in English.
    expect(log).toContain('job refused');
    expect(log).not.toMatch(/Auftrag|Bilder|Einstellungen/);
  });

  it('a Japanese member: the refusal, the finished job and the settings view in Japanese', async () => {
    h = await start();
    const { fake } = h;
    expect(await privately(fake, '狐 --n 4 --quality low', ADMIN_JA)).toBe('ここでは 1 件のジョブで作成できる画像は最大 2 枚です。枚数を減らしてください。');
    expect(await privately(fake, '狐 --quality high', ADMIN_JA)).toMatch(/^このジョブは最大 \$0\.\d{3} かかる可能性があり、あなたの1日の予算 \$0\.0500 の残り \$0\.0500 を超えます/);

    await fake.command({ command: '/imagine', text: '狐 --quality low', user: ADMIN_JA, channel: 'C0JA' });
    const job = await ended(fake, 'C0JA', /^:white_check_mark: 完了 · /);
    expect(statusOf(job)).toMatch(/^:white_check_mark: 完了 · 1024x1024 · low · png · \$0\.0\d{3} · (\d+\sms|\d+(\.\d)? 秒) · 画像は下に投稿しました（「再生成」「編集」「削除」付き）$/);
    const actions = await fake.waitFor(() => actionMessages(fake, 'C0JA')[0], 'the buttons');
    expect(buttonsOf(actions).map((b) => b.text)).toEqual(['再生成', '編集', '削除']);
    const settings = await privately(fake, 'admin settings', ADMIN_JA);
    expect(settings.split('\n')[0]).toBe('このワークスペースの設定 — それぞれの由来: 運営者（ボットの環境変数）、管理者（ここで設定）、既定値。');
  });

  it('a member whose language Pictor does not speak, or whose locale Slack does not tell, is answered in English', async () => {
    h = await start();
    const { fake } = h;
    fake.setLocale('U0KOREAN', 'ko-KR');
    expect(slackKeyOf(await privately(fake, 'a fox --n 4', 'U0KOREAN'))).toBe('refusal.too_many_images');
    fake.failNext('users.info', { status: 200, error: 'missing_scope' });
    expect(slackKeyOf(await privately(fake, 'a fox --n 4', 'U0NOSCOPE'))).toBe('refusal.too_many_images');
  });
  it('a German member whose look-up failed once is answered in German at their next request, not in English for an hour', async () => {
    h = await start();
    h.fake.failNext('users.info', { status: 200, error: 'fatal_error', count: 1 });
    expect(await privately(h.fake, 'styles', ADMIN_DE)).toBe(say('en', 'styles.none', { command: '`/imagine admin style NAME TEXT`' }));
    expect(await privately(h.fake, 'styles', ADMIN_DE)).toBe(say('de', 'styles.none', { command: '`/imagine admin style NAME TEXT`' }));
    expect(h.fake.callsOf('users.info')).toHaveLength(2);
  });
  it('a flag’s range and the rule of --compression, in a flag error and in the help, are in the member’s language and name the flag', async () => {
    h = await start();
    const nRange = (locale: string) => say(locale, 'slack.flag.integer_range', { min: 1, max: 10 });
    const compression = (locale: string) => say(locale, 'slack.flag.compression_range', { min: 0, max: 100, flag: '--format', formats: anyOf(['jpeg', 'webp']) });
    expect(await privately(h.fake, '狐 --n 0', ADMIN_JA)).toContain(nRange('ja'));
    expect(await privately(h.fake, '狐 --compression 500 --format webp', ADMIN_JA)).toContain(compression('ja'));
    const help = await privately(h.fake, 'help', ADMIN_DE);
    expect(help).toContain(nRange('de'));
    expect(help).toContain(compression('de'));
    expect(help).not.toContain('output_format');
    expect(help).not.toContain('integer');
  });
  it('a German member’s --compression with a format it does not go with is refused by the intake with no English in the answer', async () => {
    const logger = new RecordingLogger();
    h = await start(logger);
    const answer = await privately(h.fake, 'ein Fuchs --compression 80 --format png', ADMIN_DE);
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === 'validation_error').map((e) => e.level)).toEqual(['info']);
    expect(answer).not.toMatch(/integer|only|applies|output_|must/);
  });
});
