import { html, type SafeHtml } from '../html.js';

/** The login page: the console's token, nothing else. */
export function loginPage(options: { next: string; problem?: string | undefined; generatedToken: boolean }): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>Log in · Pictor console</title>
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/console.css">
</head>
<body class="login">
<main id="main">
<h1>Pictor console</h1>
<p>What the account spends, its caps and alerts. Log in with the console’s token: ${
    options.generatedToken
      ? 'this process made one when it started and printed it with the console’s address (set PICTOR_CONSOLE_TOKEN to choose your own).'
      : 'the value of PICTOR_CONSOLE_TOKEN.'
  }</p>
${options.problem ? html`<p class="problem" role="alert">${options.problem}</p>` : ''}
<form method="post" action="/login">
<input type="hidden" name="next" value="${options.next}">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>
</main>
</body>
</html>
`;
}
