import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadSlackFile } from '../../../bots/slack/download-slack-file.js';
import { isAllowedFileUrl, parseFileHost } from '../../../bots/slack/file-hosts.js';
import { isSlackInputError, type SlackInputError } from '../../../bots/slack/index.js';
import { RecordingServer } from '../../fakes/slack/RecordingServer.js';
import { png } from './harness.js';

const TOKEN = 'xoxb-download-test-token';
let server: Server;
let origin: string;
let foreign: RecordingServer;
let image: Buffer;
const seenAuth: (string | undefined)[] = [];

beforeAll(async () => {
  image = await png(8, 8);
  foreign = await new RecordingServer().start();
  server = createServer((req, res) => {
    seenAuth.push(req.headers.authorization);
    const authorized = req.headers.authorization === `Bearer ${TOKEN}`;
    switch (req.url) {
      case '/away':
        res.writeHead(302, { location: `${foreign.url}/stolen.png` }).end();
        return;
      case '/home':
        res.writeHead(302, { location: '/image.png' }).end();
        return;
      case '/image.png':
        if (!authorized) res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html><html>Sign in</html>');
        else res.writeHead(200, { 'content-type': 'image/png' }).end(image);
        return;
      case '/big.png':
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.concat([image, Buffer.alloc(4096)]));
        return;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await foreign.close();
});

async function refusal(promise: Promise<unknown>): Promise<SlackInputError> {
  try {
    await promise;
  } catch (error) {
    if (isSlackInputError(error)) return error;
    throw error;
  }
  throw new Error('the download succeeded');
}

describe('downloading a Slack file', () => {
  it('sends the bot token to an allowed host and follows a redirect that stays on allowed hosts', async () => {
    const { data, format } = await downloadSlackFile(`${origin}/home`, { token: TOKEN, allowedHosts: [parseFileHost(origin)] });
    expect(format).toBe('png');
    expect(data.equals(image)).toBe(true);
  });

  it('refuses a redirect to another host before anything is sent there', async () => {
    const error = await refusal(downloadSlackFile(`${origin}/away`, { token: TOKEN, allowedHosts: [parseFileHost(origin)] }));
    expect(error.code).toBe('file_host_not_allowed');
    expect(foreign.requests).toEqual([]);
  });

  it('refuses a URL on a host that is not allowed without a request', async () => {
    const error = await refusal(downloadSlackFile(`${foreign.url}/x.png`, { token: TOKEN, allowedHosts: [parseFileHost('files.slack.com')] }));
    expect(error.code).toBe('file_host_not_allowed');
    expect(foreign.requests).toEqual([]);
  });

  it('explains a sign-in page as a missing files:read scope', async () => {
    const error = await refusal(downloadSlackFile(`${origin}/image.png`, { token: 'xoxb-wrong', allowedHosts: [parseFileHost(origin)] }));
    expect(error.code).toBe('file_download_failed');
    expect(error.message).toContain('files:read');
  });

  it('stops reading a file that is larger than allowed', async () => {
    const error = await refusal(downloadSlackFile(`${origin}/big.png`, { token: TOKEN, allowedHosts: [parseFileHost(origin)], maxBytes: 1024 }));
    expect(error.code).toBe('file_too_large');
  });

  it('matches hosts by scheme, host and port, so a bare host name means https only', () => {
    const slack = [parseFileHost('files.slack.com')];
    expect(isAllowedFileUrl(new URL('https://files.slack.com/files-pri/T1-F1/a.png'), slack)).toBe(true);
    expect(isAllowedFileUrl(new URL('http://files.slack.com/files-pri/T1-F1/a.png'), slack)).toBe(false);
    expect(isAllowedFileUrl(new URL('https://files.slack.com.evil.example/a.png'), slack)).toBe(false);
    expect(isAllowedFileUrl(new URL('https://files.slack.com:8443/a.png'), slack)).toBe(false);
    expect(isAllowedFileUrl(new URL('https://user:pw@files.slack.com/a.png'), slack)).toBe(false);
  });
});
