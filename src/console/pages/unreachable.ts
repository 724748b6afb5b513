import { html, type SafeHtml } from '../html.js';
import { head } from './layout.js';

/** The page answered (503) when the ledger did not answer in time: short, with where it is and that a reload asks again. */
export function ledgerUnreachablePage(ledgerWhere: string, waitedSeconds: number): SafeHtml {
  return html`${head('The ledger cannot be reached')}
</head>
<body class="login">
<main id="main">
<h1>The ledger cannot be reached</h1>
<p class="problem" role="alert">The console asked ${ledgerWhere} and had no answer within ${waitedSeconds} s, so it has no figure to show. Check that it is running and reachable (the console’s log says when this happened); reload the page to ask again.</p>
</main>
</body>
</html>
`;
}

/** The page answered (503) when a file ledger was still being read: the page is being made, and a reload takes it. */
export function ledgerSlowPage(ledgerWhere: string, waitedSeconds: number): SafeHtml {
  return html`${head('The ledger is still being read')}
</head>
<body class="login">
<main id="main">
<h1>The ledger is still being read</h1>
<p class="problem" role="alert">The console is reading ${ledgerWhere} and did not finish within ${waitedSeconds} s (a large ledger takes longer). It goes on: reload the page in a few seconds to see it.</p>
</main>
</body>
</html>
`;
}
