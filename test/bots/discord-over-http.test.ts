import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { buttonsOf, FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';

const defer = useCleanup();

describe('npm start with Discord over HTTP', () => {
  it('takes interactions at the printed /interactions URL instead of the gateway, answers /imagine, and is ready in /healthz', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    defer(() => discord.close());
    const dataDir = await tempDataDir(defer);
    const lines: string[] = [];
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
        PICTOR_EMULATOR_LATENCY_MS: '0',
        PICTOR_METRICS_PORT: '0',
        ...surfaceEnv({ discord }),
        DISCORD_INTERACTIONS_PORT: '0',
        DISCORD_INTERACTIONS_HOST: '127.0.0.1',
        DISCORD_PUBLIC_KEY: discord.publicKeyHex,
      },
      (line) => lines.push(line),
    );
    defer(() => service.stop());
    const printed = lines.join('\n');
    const endpoint = /Discord bot is online \(HTTP, interactions at (\S+)\)\./.exec(printed)?.[1];
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/interactions$/);
    // Learnt from Discord without a gateway login: the application, for the invite link.
    expect(printed).toContain(`Invite it to a server: https://discord.com/oauth2/authorize?client_id=${discord.applicationId}&`);
    discord.interactionsEndpoint = endpoint;
    expect(await discord.pingInteractionsEndpoint()).toEqual({ status: 200, body: { type: 1 } });

    const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse over HTTP', quality: 'low' });
    const final = await discord.waitFor(() => {
      const message = discord.original(ix);
      return message && buttonsOf(message).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? message : undefined;
    }, 'the result');
    expect(final.attachments).toHaveLength(1);
    expect(ix.via).toBe('http');
    expect(discord.gatewayStats.connections).toBe(0);

    const base = /Metrics for Prometheus at (\S+)\/metrics/.exec(printed)?.[1];
    const ready = await fetch(`${base}/healthz`);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { discord: true } });
  }, 60_000);
});
