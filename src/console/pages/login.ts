import { html, type SafeHtml } from '../html.js';
import { head } from './layout.js';

/** The login page: the console's token, nothing else. */
export function loginPage(options: { next: string; problem?: string | undefined; generatedToken: boolean }): SafeHtml {
  return html`${head('Log in')}
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
