#!/usr/bin/env bash
# Builds everything from nothing (see build.sh) and runs every test. CI runs exactly this:
#   1. the whole suite (CTest), after the format check;
#   2. the whole suite again under AddressSanitizer + UBSan (scripts/sanitize.sh asan);
#   3. every fuzz target for TANDEM_FUZZ_SECONDS (default 30) each (scripts/fuzz.sh).
# docs/RELIABILITY.md says what each finds and how long it takes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/build.sh"
"$root/scripts/check-format.sh"
# Serially: llama.cpp's OpenMP threads spin-wait on their cores, so two model-running test
# processes on a 2-core machine slow each other down a hundredfold.
ctest --test-dir "$root/build" --output-on-failure
"$root/scripts/sanitize.sh" asan
"$root/scripts/fuzz.sh"
