# What scripts/test.sh reads off its stages' logs: the counts of passed, failed and skipped
# tests, the failed tests' names and output, and the tests that passed only when run again.
# Sourced, not run. The caller declares the totals it adds to: the integers passed, failed and
# skipped, and the arrays failed_tests and retried_tests (entries "STAGE-LOG: NAME"). Tested by
# tests/scripts/ci_summary_test.sh on the CTest logs in tests/scripts/cases/.

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

# print_failures LOG_DIR: each failed test with the last 25 lines of its output, then each
# flaky one, so that the tail of a run's output alone says what failed and why.
print_failures() {
  local logs=$1 entry
  for entry in "${failed_tests[@]}"; do
    echo "failed test: $entry"
    failed_test_output "$logs/${entry%%: *}.log" "${entry#*: }" | tail -n 25 | sed 's/^/  | /'
  done
  for entry in "${retried_tests[@]}"; do
    echo "flaky test (failed, then passed when run again): $entry"
  done
}
