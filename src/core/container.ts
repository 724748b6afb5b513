import { envBoolean, type Env } from './env.js';

/**
 * Whether this process runs in Pictor's image, so the commands it suggests are
 * the image's (`node dist/…` through `docker compose exec`, not `npm run` in a
 * clone): `PICTOR_CONTAINER=1`, which the image sets. Not a guess from
 * Docker's or Podman's marker files: a clone run in a container (a dev
 * container, a CI runner) has its npm scripts, and they are what it should be told.
 */
export function runsInContainer(env: Env): boolean {
  return envBoolean(env, 'PICTOR_CONTAINER', '1 (this runs in Pictor’s image) or 0') ?? false;
}
