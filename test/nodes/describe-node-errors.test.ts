import { describe, expect, it } from 'vitest';
import type { INode } from 'n8n-workflow';
import { toNodeError } from '../../nodes/nodes/PictorImage/node-errors.js';
import { makeAPIError } from '../../src/internal.js';

const NODE: INode = { name: 'Pictor Image', type: 'pictorImage', typeVersion: 1, position: [0, 0], parameters: {}, id: '1' };

/** A failed answer as the client hands it over: sent `attempts` times, and why it stopped early when it did. */
function failed(status: number, stoppedFor: 'service_wait' | 'backoff' | undefined, attempts = 1) {
  const error = makeAPIError({ status, body: { error: { message: 'failed', type: 'server_error', code: status === 429 ? 'rate_limit_exceeded' : 'server_error' } } });
  error.attempts = attempts;
  if (stoppedFor) error.stoppedFor = stoppedFor;
  return error;
}

describe('the hints of the Pictor Image node', () => {
  describe('for a failure sent as many times as Max Retries allows', () => {
    it('says the service failed, how many times, and to try again later or raise Max Retries when it allowed none', () => {
      expect(toNodeError(NODE, failed(503, undefined, 1), 0, [], 0).description).toBe('The service failed, and Max Retries is 0, so it was not sent again. Try again later, or raise Max Retries.');
      expect(toNodeError(NODE, failed(503, undefined, 2), 0, [], 1).description).toBe('The service failed 2 times in a row (Max Retries is 1). Try again later.');
    });

    it('says the service answered "rate limit exceeded", and to set Images per Minute or raise Max Retries', () => {
      expect(toNodeError(NODE, failed(429, undefined, 1), 0, [], 0).description).toBe(
        'The service answered "rate limit exceeded", and Max Retries is 0, so it was not sent again. Set Images per Minute to your account limit, or raise Max Retries.',
      );
    });
  });

  describe('for a failure whose wait, asked for by the service, outlasts the request', () => {
    it('says it was not sent again though Max Retries allowed it, and what to do', () => {
      expect(toNodeError(NODE, failed(503, 'service_wait'), 0, [], 2).description).toBe(
        'The service failed, and asked to wait longer than the time left of the request, so it was not sent again though Max Retries is 2. Try again later.',
      );
      expect(toNodeError(NODE, failed(429, 'service_wait'), 0, [], 2).description).toBe(
        'The service answered "rate limit exceeded", and asked to wait longer than the time left of the request, so it was not sent again though Max Retries is 2. Set Images per Minute to your account limit.',
      );
    });
  });

  describe('for a failure the client stopped sending again before Max Retries ran out', () => {
    it('does not blame the service for a wait the client chose (the service named none)', () => {
      expect(toNodeError(NODE, failed(500, 'backoff'), 0, [], 2).description).toBe(
        'The service failed, and named no wait; the wait before sending it again was longer than the time left of the request, so it was not sent again though Max Retries is 2. Try again later.',
      );
    });
  });
});
