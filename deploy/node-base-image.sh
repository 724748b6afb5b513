#!/usr/bin/env bash
# Builds a Node.js 20 base image without a container registry: Debian trixie
# (minbase) from Debian's mirror with debootstrap, then Debian's nodejs and npm
# in it. Pictor's image is then built FROM it (--build-arg NODE_IMAGE=...), so
# neither needs more than Debian's packages and the npm registry: the recipe of
# docs/deploying.md ("Without a container registry"), and the container test.
# Kept between runs: an existing image is reused.
#
#   npm run image:base -- [--rebuild] [IMAGE]   (default localhost/pictor-node-base:20)
#   deploy/node-base-image.sh [--rebuild] [IMAGE]
#
# --rebuild makes it again even when it exists (CI does, as a fresh machine would).
#
# Needs root, podman, runc and debootstrap. PODMAN (default "podman --runtime
# runc") and DEBIAN_MIRROR (default http://deb.debian.org/debian) may be set.
set -euo pipefail

rebuild=false
if [ "${1:-}" = "--rebuild" ]; then
  rebuild=true
  shift
fi
image="${1:-localhost/pictor-node-base:20}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
read -r -a podman <<<"${PODMAN:-podman --runtime runc}"

if [ "$rebuild" = true ]; then
  "${podman[@]}" rmi --force "$image" >/dev/null 2>&1 || true
elif "${podman[@]}" image exists "$image"; then
  echo "== base image $image: present, reused"
  exit 0
fi

work=$(mktemp -d)
builder="pictor-base-build-$$"
cleanup() {
  "${podman[@]}" rm -f "$builder" >/dev/null 2>&1 || true
  "${podman[@]}" rmi -f localhost/pictor-debian-trixie:minbase >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== base image $image: debootstrap trixie (minbase) from $mirror"
debootstrap --variant=minbase trixie "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
}
tar -C "$work/root" -c . | "${podman[@]}" import - localhost/pictor-debian-trixie:minbase >/dev/null
rm -rf "$work/root"

echo "== base image $image: Debian's nodejs and npm"
"${podman[@]}" run --name "$builder" --network host localhost/pictor-debian-trixie:minbase \
  sh -c 'export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq &&
    apt-get install -y -qq --no-install-recommends nodejs npm ca-certificates >/dev/null &&
    apt-get clean && rm -rf /var/lib/apt/lists/* &&
    node --version && npm --version'
"${podman[@]}" commit \
  --change 'CMD ["node"]' \
  --change 'ENV LANG=C.UTF-8' \
  "$builder" "$image" >/dev/null
echo "== base image $image: built"
