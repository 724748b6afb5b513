import { existsSync } from 'node:fs';
import { envBoolean, type Env } from './env.js';

/**
 * Whether this process runs in a container, so the commands it suggests are
 * the container's (`node dist/…` through `docker compose exec`, not `npm run`
 * in a clone): `PICTOR_CONTAINER=1` (Pictor's image sets it), or the marker
 * file Docker (`/.dockerenv`) or Podman (`/run/.containerenv`) puts in every
 * container.
 */
export function runsInContainer(env: Env, exists: (path: string) => boolean = existsSync): boolean {
  const said = envBoolean(env, 'PICTOR_CONTAINER', '1 (this runs in a container) or 0');
  if (said !== undefined) return said;
  return exists('/.dockerenv') || exists('/run/.containerenv');
}
