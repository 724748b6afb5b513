/**
 * The spec's `{base_url}`: `/v1/…` paths are appended to it. A trailing `/v1`
 * (as in OpenAI-style settings) and trailing slashes are tolerated.
 */
export function normalizeBaseURL(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new TypeError(`baseURL is not a valid URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`baseURL must be http or https, not ${url.protocol}`);
  }
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/v1')) path = path.slice(0, -3);
  return `${url.origin}${path}`;
}

export function endpointURL(baseURL: string, path: string): string {
  return `${baseURL}${path}`;
}
