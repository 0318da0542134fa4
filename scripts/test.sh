#!/usr/bin/env bash
# Builds everything from nothing (see build.sh) and runs every test. CI runs exactly this, in
# stages, each reported on one line with its duration and result:
#   deps, llama.cpp, build   set-up and the normal build (build.sh's steps);
#   format                   clang-format check of every source file;
#   tests                    the whole suite (CTest);
#   asan build, asan tests   the whole suite again under AddressSanitizer + UBSan (sanitize.sh);
#   fuzz build, fuzz         every fuzz target for TANDEM_FUZZ_SECONDS (default 30) each (fuzz.sh).
# A failed test stage does not stop the later ones, so one run shows every failure; a failed
# set-up or build stops what depends on it. The last line is the plain summary of everything
# that ran, `N passed, M failed` (tests, fuzz targets, the format check); before it, each failed
# test is named with the end of its output. A failed test is run once more: it fails only if it
# fails again, and a test that passed the second time is named as flaky. The exit status is non-zero when anything failed.
# Logs of each stage stay in build/ci/. docs/RELIABILITY.md says what each stage finds and how
# long it takes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
logs="$root/build/ci"
mkdir -p "$logs"

passed=0
failed=0
skipped=0
failed_stages=()
stage_lines=()
failed_tests=()
retried_tests=()

# stage NAME COMMAND...: runs COMMAND with its output shown and kept in $logs/NAME.log, then
# prints the stage line. Returns COMMAND's status.
stage() {
  local name=$1 start=$SECONDS status=0
  shift
  echo "=== stage: $name"
  "$@" 2>&1 | tee "$logs/${name// /-}.log" || status=$?
  local line
  line=$(printf 'stage: %-12s %5d s  %s' "$name" $((SECONDS - start)) \
    "$( ((status == 0)) && echo ok || echo "FAILED (exit $status)")")
  echo "$line"
  stage_lines+=("$line")
  if ((status != 0)); then failed_stages+=("$name"); fi
  return "$status"
}

# Adds a CTest log's counts to the totals. CTest counts a skipped test among those "out of N"
# and lists it under "did not run" as (Skipped).
count_ctest() {
  local log=$1 summary total not_passed skip
  summary=$(grep -E '[0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  if [[ -z "$summary" ]]; then
    failed=$((failed + 1)) # no summary: CTest itself failed, count the stage as one failure
    return
  fi
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
  not_passed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$summary")
  skip=$(grep -cE '\(Skipped\)$' "$log" || true)
  passed=$((passed + total - not_passed - skip))
  failed=$((failed + not_passed))
  skipped=$((skipped + skip))
  # CTest lists each failure after "The following tests FAILED:" as "  N - Name (Failed)".
  local name
  while read -r name; do
    failed_tests+=("$(basename "$log" .log): $name")
  done < <(sed -n '/The following tests FAILED:/,$p' "$log" |
    sed -nE 's/^[[:space:]]+[0-9]+ - (.*)$/\1/p')
  # A test that failed once and passed when run again (see ctest_serial) is counted as passed
  # and named in the summary, so a flaky test stays in sight.
  while read -r name; do
    failed_tests_contain "$log" "$name" || retried_tests+=("$(basename "$log" .log): $name")
  done < <(grep -E '^[0-9 /]*Test +#[0-9]+: ' "$log" | grep -F '***' | grep -vF '***Skipped' |
    sed -nE 's/^[0-9 /]*Test +#[0-9]+: ([^ ]+) .*/\1/p' | sort -u)
}

# failed_tests_contain LOG NAME: whether CTest's final list of failures in LOG names NAME.
failed_tests_contain() {
  sed -n '/The following tests FAILED:/,$p' "$1" | grep -qF -- " - $2 "
}

# Adds fuzz.sh's per-target lines to the totals: one clean target is one pass.
count_fuzz() {
  local log=$1 clean bad
  clean=$(grep -cE '^fuzz: [a-z_]+ +[0-9]+ execs' "$log" || true)
  bad=$(grep -cE '^fuzz: [a-z_]+ FAILED' "$log" || true)
  if ((clean + bad == 0)); then bad=1; fi # it never got to the targets
  passed=$((passed + clean))
  failed=$((failed + bad))
}

# failed_test_output LOG "NAME (Failed)": what CTest's --output-on-failure printed under that test,
# from its result line to the next test's start.
failed_test_output() {
  local log=$1 name=${2% (*}
  awk -v name="$name" '
    index($0, "Test #") && index($0, ": " name " ") && /\*\*\*|Failed|Timeout|Exception/ { on = 1; next }
    on && /^ *Start +[0-9]+:/ { exit }
    on { print }' "$log"
}

# A failed test is run once more: one that fails twice fails the stage, one that passes the
# second time passes and is named as flaky in the summary.
readonly retry=(--repeat until-pass:2)

ctest_serial() {
  # Serially: llama.cpp's OpenMP threads spin-wait on their cores, so two model-running test
  # processes on a 2-core machine slow each other down a hundredfold.
  ctest --test-dir "$root/build" --output-on-failure "${retry[@]}"
}

finish() {
  echo
  printf '%s\n' "${stage_lines[@]}"
  if ((${#failed_stages[@]} > 0)); then
    echo "failed stages: ${failed_stages[*]}; logs in $logs"
  fi
  # Named again here, with the end of what each printed, so that the tail of the output alone
  # says what failed and why.
  local entry
  for entry in "${failed_tests[@]}"; do
    echo "failed test: $entry"
    failed_test_output "$logs/${entry%%: *}.log" "${entry#*: }" | tail -n 25 | sed 's/^/  | /'
  done
  for entry in "${retried_tests[@]}"; do
    echo "flaky test (failed, then passed when run again): $entry"
  done
  local line="$passed passed, $failed failed"
  if ((skipped > 0)); then line+=", $skipped skipped"; fi
  echo "$line"
  if ((${#failed_stages[@]} > 0 || failed > 0)); then exit 1; fi
  exit 0
}

built=1
stage deps "$root/scripts/install-deps.sh" &&
  stage llama.cpp "$root/scripts/build-llama.sh" &&
  stage build "$root/scripts/build.sh" || built=0
if ((built == 0)); then
  failed=$((failed + 1))
  finish
fi

if stage format "$root/scripts/check-format.sh"; then passed=$((passed + 1)); else
  failed=$((failed + 1))
fi
stage tests ctest_serial || true
count_ctest "$logs/tests.log"

if stage "asan build" "$root/scripts/sanitize.sh" asan --build-only; then
  stage "asan tests" "$root/scripts/sanitize.sh" asan --no-build "${retry[@]}" || true
  count_ctest "$logs/asan-tests.log"
else
  failed=$((failed + 1))
fi

if stage "fuzz build" "$root/scripts/fuzz.sh" --build-only; then
  stage fuzz "$root/scripts/fuzz.sh" --no-build || true
  count_fuzz "$logs/fuzz.log"
else
  failed=$((failed + 1))
fi
finish
