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

# The totals and the failed and flaky tests' names (scripts/ci-summary.sh fills them in).
passed=0
failed=0
skipped=0
failed_tests=()
retried_tests=()
failed_stages=()
stage_lines=()
# shellcheck source=ci-summary.sh
source "$root/scripts/ci-summary.sh"

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
  print_failures "$logs"
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
# CI throws its checkout away after the run, and its disk once filled up linking the fuzz
# targets with all three trees present: there the ASan tree (about 2 GB) is given back first.
# Elsewhere it stays, for incremental ASan builds.
if [[ -n "${CI:-}" ]]; then rm -rf "$root/build-asan"; fi

if stage "fuzz build" "$root/scripts/fuzz.sh" --build-only; then
  stage fuzz "$root/scripts/fuzz.sh" --no-build || true
  count_fuzz "$logs/fuzz.log"
else
  failed=$((failed + 1))
fi
finish
