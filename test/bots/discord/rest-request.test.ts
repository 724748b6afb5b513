import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { FirstAnswersInFlight } from '../../../bots/discord/first-answers-first.js';
import { withFirstAnswerPool } from '../../../bots/discord/rest-request.js';

const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

describe('the first answers’ own connection pool', () => {
  it('sends an interaction callback over its own pool and every other request over the client’s', async () => {
    const firstAnswers = new Agent();
    agents.push(firstAnswers);
    const seen: { url: string; dispatcher: unknown }[] = [];
    const makeRequest = withFirstAnswerPool(async (url, init) => {
      seen.push({ url, dispatcher: (init as { dispatcher?: unknown }).dispatcher });
      return new Response(null, { status: 204 }) as never;
    }, firstAnswers, new FirstAnswersInFlight());
    const api = 'https://discord.com/api/v10';
    await makeRequest(`${api}/interactions/123456789012345678/aW50ZXJhY3Rpb24/callback`, { method: 'POST' } as never);
    await makeRequest(`${api}/interactions/123456789012345678/aW50ZXJhY3Rpb24/callback?with_response=true`, { method: 'POST' } as never);
    await makeRequest(`${api}/channels/1/messages`, { method: 'POST' } as never);
    await makeRequest(`${api}/webhooks/1/aW50ZXJhY3Rpb24/messages/@original`, { method: 'PATCH' } as never);
    expect(seen.map((s) => s.dispatcher === firstAnswers)).toEqual([true, true, false, false]);
  });

  it('counts a first answer in flight until Discord answers it, and nothing else', async () => {
    const inFlight = new FirstAnswersInFlight();
    const pool = new Agent();
    agents.push(pool);
    const answers: (() => void)[] = [];
    const makeRequest = withFirstAnswerPool(
      () =>
        new Promise((resolve) => {
          answers.push(() => resolve(new Response(null, { status: 204 }) as never));
        }),
      pool,
      inFlight,
    );
    const api = 'https://discord.com/api/v10';
    const callback = makeRequest(`${api}/interactions/123456789012345678/aW50ZXJhY3Rpb24/callback`, { method: 'POST' } as never);
    const edit = makeRequest(`${api}/webhooks/1/aW50ZXJhY3Rpb24/messages/@original`, { method: 'PATCH' } as never);
    expect(inFlight.size).toBe(1);
    answers.forEach((answer) => answer());
    await Promise.all([callback, edit]);
    expect(inFlight.size).toBe(0);
  });
});
