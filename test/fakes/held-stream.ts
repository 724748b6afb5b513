import type { Emulator } from '../../src/emulator/index.js';
import { listenWithNodeHttp, type EmulatorServer } from '../../src/emulator/node-server.js';

/**
 * Serves the emulator over node:http with each event of a streamed answer held until `before(index)` settles (the
 * first event is index 0): a test lets the service's next partial image through once the chat shows the last one.
 * A bot drops a preview the next update overtakes while it waits (the latest wins), so a test that means to see every
 * preview waits for each instead of hoping the service is slower than the bot.
 */
export function serveHoldingEvents(emulator: Emulator, before: (index: number) => Promise<unknown>): Promise<EmulatorServer> {
  return listenWithNodeHttp({
    handle: async (request) => {
      const response = await emulator.fetch(request);
      if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
      return new Response(heldEvents(response.body, before), { status: response.status, headers: response.headers });
    },
    badRequest: () => new Response('bad request', { status: 400 }),
    internalError: () => new Response('internal error', { status: 500 }),
  });
}

function heldEvents(body: ReadableStream<Uint8Array>, before: (index: number) => Promise<unknown>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const decoder = new TextDecoder();
      let buffered = '';
      let index = 0;
      try {
        for await (const chunk of body) {
          buffered += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffered.indexOf('\n\n')) !== -1) {
            const event = buffered.slice(0, end + 2);
            buffered = buffered.slice(end + 2);
            await before(index++);
            controller.enqueue(encoder.encode(event));
          }
        }
        if (buffered) controller.enqueue(encoder.encode(buffered));
        controller.close();
      } catch (error) {
        controller.error(error);
      }
    },
  });
}
