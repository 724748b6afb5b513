import { afterEach, describe, expect, it, vi } from 'vitest';
import type { webApi } from '@slack/bolt';
import { silentLogger } from '../../../src/internal.js';
import { UserLocales } from '../../../bots/slack/user-locales.js';

/** A Web API client whose `users.info` answers with each user's locale, counting the calls. */
function clientWith(locales: Record<string, string>) {
  const calls: string[] = [];
  const client = {
    users: {
      info: async ({ user }: { user: string }) => {
        calls.push(user);
        return { ok: true, user: { id: user, locale: locales[user] } };
      },
    },
  } as unknown as webApi.WebClient;
  return { client, calls };
}

afterEach(() => vi.useRealTimers());

describe('UserLocales', () => {
  it('asks Slack once per member, however many requests come together, and keeps the answer', async () => {
    const locales = new UserLocales({ logger: silentLogger() });
    const { client, calls } = clientWith({ U1: 'de-DE' });
    expect(await Promise.all([locales.of(client, 'T1', 'U1'), locales.of(client, 'T1', 'U1'), locales.of(client, 'T1', 'U1')])).toEqual(['de-DE', 'de-DE', 'de-DE']);
    expect(await locales.of(client, 'T1', 'U1')).toBe('de-DE');
    expect(calls).toEqual(['U1']);
    await locales.stop();
  });

  it('keeps at most maxEntries members (the least recently asked go first) and asks again after ttlMs', async () => {
    let now = 0;
    const locales = new UserLocales({ logger: silentLogger(), maxEntries: 2, ttlMs: 1000, now: () => now });
    const { client, calls } = clientWith({ U1: 'de-DE', U2: 'ja-JP', U3: 'fr-FR' });
    for (const user of ['U1', 'U2', 'U1', 'U3', 'U1', 'U2']) await locales.of(client, 'T1', user);
    // U2 was pushed out by U3 (U1 was asked since), so it is asked again.
    expect(calls).toEqual(['U1', 'U2', 'U3', 'U2']);
    now = 1500;
    await locales.of(client, 'T1', 'U1');
    expect(calls.at(-1)).toBe('U1');
    await locales.stop();
  });

  it('answers in English (undefined) when Slack takes longer than waitMs, and keeps the late answer for next time', async () => {
    vi.useFakeTimers();
    const locales = new UserLocales({ logger: silentLogger(), waitMs: 1000 });
    let answer!: (value: unknown) => void;
    const calls: string[] = [];
    const client = {
      users: {
        info: ({ user }: { user: string }) => {
          calls.push(user);
          return new Promise((resolve) => (answer = () => resolve({ ok: true, user: { id: user, locale: 'ja-JP' } })));
        },
      },
    } as unknown as webApi.WebClient;
    const first = locales.of(client, 'T1', 'U1');
    await vi.advanceTimersByTimeAsync(1000);
    expect(await first).toBeUndefined();
    answer(undefined);
    vi.useRealTimers();
    await expect.poll(() => locales.of(client, 'T1', 'U1')).toBe('ja-JP');
    expect(calls).toEqual(['U1']);
    await locales.stop();
  });

  it('keeps no failed look-up: the member’s next request asks Slack again and is answered in their language', async () => {
    const locales = new UserLocales({ logger: silentLogger() });
    const calls: string[] = [];
    let fails = 1;
    const client = {
      users: {
        info: async ({ user }: { user: string }) => {
          calls.push(user);
          if (fails-- > 0) throw Object.assign(new Error('An API error occurred: fatal_error'), { code: 'slack_webapi_platform_error', data: { ok: false, error: 'fatal_error' } });
          return { ok: true, user: { id: user, locale: 'de-DE' } };
        },
      },
    } as unknown as webApi.WebClient;
    expect(await locales.of(client, 'T1', 'U1')).toBeUndefined();
    expect(await locales.of(client, 'T1', 'U1')).toBe('de-DE');
    expect(await locales.of(client, 'T1', 'U1')).toBe('de-DE');
    expect(calls).toEqual(['U1', 'U1']);
    await locales.stop();
  });

  it('keeps that the app may not ask (missing_scope) as Slack’s answer: English, without asking again', async () => {
    const locales = new UserLocales({ logger: silentLogger() });
    const calls: string[] = [];
    const client = {
      users: {
        info: async ({ user }: { user: string }) => {
          calls.push(user);
          throw Object.assign(new Error('An API error occurred: missing_scope'), { code: 'slack_webapi_platform_error', data: { ok: false, error: 'missing_scope' } });
        },
      },
    } as unknown as webApi.WebClient;
    expect(await locales.of(client, 'T1', 'U1')).toBeUndefined();
    expect(await locales.of(client, 'T1', 'U1')).toBeUndefined();
    expect(calls).toEqual(['U1']);
    await locales.stop();
  });

  it('paces its look-ups: at most perMinute a minute', async () => {
    vi.useFakeTimers();
    const locales = new UserLocales({ logger: silentLogger(), perMinute: 2, waitMs: 120_000 });
    const { client, calls } = clientWith({ U3: 'fr-FR' });
    const asked = ['U1', 'U2', 'U3'].map((user) => locales.of(client, 'T1', user));
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toEqual(['U1', 'U2']);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toEqual(['U1', 'U2', 'U3']);
    // The member past the bound is asked when the next minute's look-ups come, and their answer is kept.
    expect(await asked[2]).toBe('fr-FR');
    expect(await locales.of(client, 'T1', 'U3')).toBe('fr-FR');
    expect(calls).toHaveLength(3);
    await locales.stop();
  });
});
