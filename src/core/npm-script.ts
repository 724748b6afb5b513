import { dirname, resolve } from 'node:path';

/**
 * Whether this process is Pictor's own npm script (`npm run pictor`, `npm start` in Pictor's repository): npm names the
 * package `pictor` and starts the script in the package's root. Not so for another project's npm script that runs an
 * installed `pictor`, for `npx pictor`, or for `node dist/cli/pictor.js`. What it changes: where the user's paths start
 * (npm keeps the user's folder in INIT_CWD), and which command an entry point tells the user to try
 * (`npm run pictor -- …` here, `npx pictor …` where Pictor is an installed package).
 */
export function runsAsPictorScript(env: NodeJS.ProcessEnv, cwd: string): boolean {
  const packageJson = env.npm_package_json;
  return env.npm_package_name === 'pictor' && packageJson !== undefined && packageJson !== '' && resolve(dirname(packageJson)) === resolve(cwd);
}
