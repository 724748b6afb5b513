import { describeDuration } from '../../core/describe-duration.js';
import { html, type SafeHtml } from '../html.js';
import { head } from './layout.js';

/**
 * Why a page answered 503: `unreachable`, the ledger did not answer (Redis gone); `slow`, a file ledger was still being
 * read (the page goes on being made, and a reload takes it).
 */
export type LedgerWaitReason = 'unreachable' | 'slow';

const WORDS: Record<LedgerWaitReason, { title: string; text: (where: string, waited: string) => string }> = {
  unreachable: {
    title: 'The ledger cannot be reached',
    text: (where, waited) =>
      `The console asked ${where} and had no answer within ${waited}, so it has no figure to show. Check that it is running and reachable (the console’s log says when this happened); reload the page to ask again.`,
  },
  slow: {
    title: 'The ledger is still being read',
    text: (where, waited) => `The console is reading ${where} and did not finish within ${waited} (a large ledger takes longer). It goes on: reload the page in a few seconds to see it.`,
  },
};

/** The page answered (503) when the ledger did not answer in time: short, with its reason, where the ledger is and what a reload does. */
export function ledgerWaitPage(reason: LedgerWaitReason, ledgerWhere: string, waitedMs: number): SafeHtml {
  const { title, text } = WORDS[reason];
  return html`${head(title)}
</head>
<body class="login">
<main id="main">
<h1>${title}</h1>
<p class="problem" role="alert">${text(ledgerWhere, describeDuration(waitedMs))}</p>
</main>
</body>
</html>
`;
}
