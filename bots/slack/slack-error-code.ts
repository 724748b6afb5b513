/** The `error` of a Slack Web API answer (`not_in_channel`…), or the error's code. */
export function slackErrorCode(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  if (data && typeof data.error === 'string') return data.error;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
