#!/usr/bin/env bash
# The test suite under load: runs `npm test` in this clone RUNS times (default 5), each
# time with a second `npm test` running beside it in another clone of the same commit
# (a shared CI machine), and prints each run's wall time, its result and the tests that
# failed, then a summary. Exits 1 when any measured run failed.
#
#   bench/test-suite-under-load.sh [RUNS]            # e.g. bench/test-suite-under-load.sh 5
#   BESIDE=none bench/test-suite-under-load.sh 1     # the suite alone, for comparison
#   BESIDE=/path/to/other/clone bench/...            # reuse a clone already installed
#
# The clone beside is made with `git clone` of HEAD into a temporary folder and
# `npm ci` (from npm's cache when it can), once, and removed at the end. Each pair of runs
# starts together; the beside run is restarted whenever it ends before the measured one,
# so the measured run has load beside it from its first to its last second. Run it on an
# otherwise quiet machine (and say how quiet it was with the figures, in bench/RESULTS.md).
# Not part of `npm run bench` (a .sh, and it takes RUNS × ~10 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-5}"
beside="${BESIDE:-}"
logs=$(mktemp -d "${TMPDIR:-/tmp}/pictor-suite-under-load-XXXXXX")
made_clone=""

cleanup() {
  if [ -n "${beside_pid:-}" ]; then kill -- "-$beside_pid" 2>/dev/null || true; fi
  if [ -n "$made_clone" ]; then rm -rf "$made_clone"; fi
}
trap cleanup EXIT

if [ "$beside" != "none" ] && [ -z "$beside" ]; then
  made_clone="$logs/beside"
  echo "== a clone of $(git rev-parse --short HEAD) to load the machine with: $made_clone"
  git clone --quiet --no-hardlinks . "$made_clone"
  git -C "$made_clone" checkout --quiet "$(git rev-parse HEAD)"
  (cd "$made_clone" && npm ci --prefer-offline --no-audit --no-fund >"$logs/beside-install.log" 2>&1) || {
    tail -n 30 "$logs/beside-install.log" >&2
    exit 1
  }
  beside="$made_clone"
fi

echo "== $runs run(s) of npm test in $(pwd)$([ "$beside" = none ] && echo ', alone' || echo ", with npm test beside it in $beside")"
echo "== machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

failed_runs=0
walls=()
for i in $(seq 1 "$runs"); do
  beside_pid=""
  if [ "$beside" != "none" ]; then
    # The load beside: npm test again and again until the measured run is over (its own process group, to stop it whole).
    setsid bash -c "cd '$beside' && while true; do npm test >>'$logs/beside-$i.log' 2>&1 || true; done" &
    beside_pid=$!
  fi
  started=$(date +%s.%N)
  set +e
  npm test >"$logs/run-$i.log" 2>&1
  code=$?
  set -e
  ended=$(date +%s.%N)
  if [ -n "$beside_pid" ]; then
    kill -- "-$beside_pid" 2>/dev/null || true
    wait "$beside_pid" 2>/dev/null || true
    beside_pid=""
  fi
  wall=$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.0f", b - a }')
  walls+=("$wall")
  # vitest colours its summary even in a file: the colours go before the lines are read.
  plain=$(sed -E 's/\x1b\[[0-9;]*m//g' "$logs/run-$i.log")
  tests=$(grep -aE '^\s*Tests\s' <<<"$plain" | tail -n 1 | sed -E 's/^\s+//' || true)
  printf '%s run %d: %4d s  exit %d  %s\n' "==" "$i" "$wall" "$code" "$tests"
  if [ "$code" -ne 0 ]; then
    failed_runs=$((failed_runs + 1))
    grep -aE '^\s*(FAIL|×)' <<<"$plain" | sort -u | head -n 20 | sed 's/^/     /' || true
  fi
done

sorted=$(printf '%s\n' "${walls[@]}" | sort -n)
median=$(echo "$sorted" | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }')
echo "== wall times (s): ${walls[*]}; median $median, max $(echo "$sorted" | tail -n 1)"
echo "== runs failed: $failed_runs of $runs; load after: $(cut -d' ' -f1-3 /proc/loadavg); logs in $logs"
[ "$failed_runs" -eq 0 ]
