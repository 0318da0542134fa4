#!/usr/bin/env bash
# Builds Tandem with sanitizers into a tree of its own and runs the whole test suite there:
#
#   scripts/sanitize.sh asan   AddressSanitizer + LeakSanitizer + UBSan, in build-asan/
#   scripts/sanitize.sh tsan   ThreadSanitizer, in build-tsan/
#
# After the kind, `--build-only` builds without running the tests and `--no-build` runs the
# tests of the tree as it is (scripts/test.sh times the two apart); other arguments go to ctest
# (e.g. `scripts/sanitize.sh tsan -R GatewayFaultTest`). Incremental
# like build.sh, whose steps it repeats; llama.cpp stays the uninstrumented cached build.
# Every Tandem program a test starts (tandem, fault_upstream) is instrumented too and reports
# through the same options: a report makes it exit with $exit_code, which fails the test
# (tests/server/test_harness.h, tests/cli/cli_test.cpp, tests/e2e/harness.mjs check it).
# See docs/RELIABILITY.md, "CI".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

kind=${1:-}
case "$kind" in
  asan) sanitize="address,undefined" ;;
  tsan) sanitize="thread" ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [ctest arguments]" >&2
    exit 2
    ;;
esac
shift
steps=all
case "${1:-}" in
  --build-only) steps=build; shift ;;
  --no-build) steps=test; shift ;;
esac
build="$root/build-$kind"
suppressions="$root/scripts/sanitizers"

# One exit code for every sanitizer, distinct from the exit codes of tandem itself (0, 1, 2), so
# a CLI test expecting a failure exit does not mistake a report for it.
exit_code=66
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=$exit_code:detect_leaks=1:\
check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=0:\
suppressions=$suppressions/asan.supp"
export LSAN_OPTIONS="exitcode=$exit_code:suppressions=$suppressions/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=$exit_code:\
suppressions=$suppressions/ubsan.supp"
export TSAN_OPTIONS="halt_on_error=1:exitcode=$exit_code:second_deadlock_stack=1:\
suppressions=$suppressions/tsan.supp:print_suppressions=0"

# Configures and builds the instrumented tree.
build_tree() {
  "$root/scripts/install-deps.sh"
  local llama_prefix test_models
  llama_prefix=$("$root/scripts/build-llama.sh" | tail -n 1)
  test_models=$("$root/scripts/test-models.sh" | tail -n 1)

  # A new llama.cpp prefix or another sanitizer needs a fresh configure, and so does a tree
  # configured by hand (no stamp): CMake would keep its cached flags.
  local stamp="$build/.sanitize-config" config="$sanitize $llama_prefix"
  if [[ -f "$build/CMakeCache.txt" && "$(cat "$stamp" 2>/dev/null)" != "$config" ]]; then
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
  # Debug keeps assert() on. -O1 instead of -O0: sanitized code at -O0 runs several times
  # slower; -g1 (line tables) is all a report's stack needs and links much faster than -g.
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" \
    -DTANDEM_SANITIZE="$sanitize" -DTANDEM_BUILD_BENCH=OFF \
    -DCMAKE_PREFIX_PATH="$llama_prefix" -DTANDEM_TEST_MODELS_DIR="$test_models" >/dev/null
  echo "$config" >"$stamp"

  # The build runs the test binaries too (gtest_discover_tests), with the options above.
  local start=$SECONDS
  cmake --build "$build" --parallel "$(nproc)"
  echo "sanitize: $kind build took $((SECONDS - start)) s"
}

if [[ "$steps" != test ]]; then
  build_tree
fi
if [[ "$steps" == build ]]; then
  exit 0
fi
if [[ ! -f "$build/CTestTestfile.cmake" ]]; then
  echo "sanitize: $build is not built; run scripts/sanitize.sh $kind first" >&2
  exit 2
fi

# Serially, as scripts/test.sh does: llama.cpp's OpenMP threads spin on every core.
start=$SECONDS
status=0
ctest --test-dir "$build" --output-on-failure "$@" || status=$?
echo "sanitize: $kind tests took $((SECONDS - start)) s"
exit "$status"
