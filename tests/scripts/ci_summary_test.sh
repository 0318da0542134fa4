#!/usr/bin/env bash
# scripts/ci-summary.sh against real CTest logs: each tests/scripts/cases/NAME.log, read as a
# test stage's log, must give the counts and the failure listing in NAME.expected. The logs
# came from CTest runs with --output-on-failure --repeat until-pass:2 (as scripts/test.sh runs
# it), the build path replaced.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cases="$root/tests/scripts/cases"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# summarise LOG: what scripts/test.sh would report of LOG as its tests stage.
summarise() (
  passed=0 failed=0 skipped=0
  failed_tests=() retried_tests=()
  source "$root/scripts/ci-summary.sh"
  cp "$1" "$work/tests.log"
  count_ctest "$work/tests.log"
  echo "$passed passed, $failed failed, $skipped skipped"
  print_failures "$work"
)

status=0
for log in "$cases"/*.log; do
  name=$(basename "$log" .log)
  if diff -u "$cases/$name.expected" <(summarise "$log") >"$work/diff"; then
    echo "ok: $name"
  else
    echo "FAILED: $name (expected, then what the summary said)"
    cat "$work/diff"
    status=1
  fi
done
exit "$status"
