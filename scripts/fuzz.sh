#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, fuzz/README.md) into build-fuzz/ and fuzzes
# every parser of untrusted input in turn: first it replays the target's minimised crashers
# (fuzz/regressions/<target>/), then it fuzzes a scratch copy of the seeds (fuzz/corpus/<target>/)
# for SECONDS. The committed corpus never grows by itself. A crash, leak, timeout or
# out-of-memory fails the script, naming the target, the artifact and the command to reproduce it.
#
#   scripts/fuzz.sh [--build-only | --no-build] [SECONDS_PER_TARGET [TARGET...]]
#   --build-only         build the targets, fuzz nothing; --no-build: fuzz the targets as built
#   TANDEM_FUZZ_SECONDS  seconds per target without an argument (default 30)
#   TANDEM_FUZZ_WORK     scratch directory (default: a new one under $TMPDIR, deleted on success)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

steps=all
case "${1:-}" in
  --build-only) steps=build; shift ;;
  --no-build) steps=fuzz; shift ;;
esac
seconds=${1:-${TANDEM_FUZZ_SECONDS:-30}}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: SECONDS_PER_TARGET must be a positive integer, not '$seconds'" >&2
  exit 2
fi
shift $(($# > 0 ? 1 : 0))

# Inputs longer than the parser's real inputs only slow the fuzzer down: a request header may
# reach 16 KiB (server.max_header_bytes), the shipped model's header is 14 KB, the rest are a
# few KB in practice (a stream is read line by line: a few events show every state).
declare -A max_len=(
  [http_request]=20480 [openai_body]=8192 [upstream_sse]=4096 [yaml_config]=8192
  [routing_traces]=8192 [privacy_scan]=4096 [egress_guard]=8192 [gguf_header]=16384
  [prompt_features]=8192
)
targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(find "$root/fuzz/corpus" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' |
    sort)
fi
for target in "${targets[@]}"; do
  if [[ -z "${max_len[$target]:-}" ]]; then
    echo "fuzz: unknown target '$target' (known: ${!max_len[*]})" >&2
    exit 2
  fi
done

build="$root/build-fuzz"
# Configures and builds every fuzz target.
build_targets() {
  "$root/scripts/install-deps.sh"
  # llama.cpp is built by the system compiler, as for build/: CC and CXX are not exported to it.
  local llama_prefix
  llama_prefix=$("$root/scripts/build-llama.sh" | tail -n 1)
  local stamp="$build/.llama-prefix"
  if [[ -f "$stamp" && "$(cat "$stamp")" != "$llama_prefix" ]]; then
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
  # Debug keeps assert() on (nlohmann::json's, ours); fuzz/instrument.cmake compiles at -O1.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTANDEM_FUZZ=ON \
    -DTANDEM_BUILD_TESTS=OFF -DTANDEM_BUILD_BENCH=OFF -DTANDEM_WERROR=OFF \
    -DCMAKE_PREFIX_PATH="$llama_prefix" >/dev/null
  echo "$llama_prefix" >"$stamp"
  cmake --build "$build" --target fuzz_all --parallel "$(nproc)"
}

if [[ "$steps" != fuzz ]]; then
  build_targets
fi
if [[ "$steps" == build ]]; then
  exit 0
fi
for target in "${targets[@]}"; do
  if [[ ! -x "$build/fuzz/fuzz_$target" ]]; then
    echo "fuzz: $build/fuzz/fuzz_$target is not built; run scripts/fuzz.sh --build-only" >&2
    exit 2
  fi
done

work=${TANDEM_FUZZ_WORK:-}
if [[ -z "$work" ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-fuzz.XXXXXX")
  keep_work=0
else
  mkdir -p "$work"
  keep_work=1
fi

# The value of `key:` in libFuzzer's last status line ("#N DONE cov: 1 ft: 2 corp: 3/4Kb ...").
status_field() {
  grep -E '^#[0-9]+' "$1" | tail -n 1 | grep -oE "$2: [^ ]+" | cut -d' ' -f2 || true
}
final_stat() {
  grep -E "^stat::$2:" "$1" | awk '{print $2}' || true
}

failures=()
for target in "${targets[@]}"; do
  binary="$build/fuzz/fuzz_$target"
  dir="$work/$target"
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -R "$root/fuzz/corpus/$target/." "$dir/corpus/"
  log="$dir/fuzz.log"
  options=(-timeout=10 -rss_limit_mb=2048 "-max_len=${max_len[$target]}"
    "-artifact_prefix=$dir/artifacts/")
  if [[ -f "$root/fuzz/dictionaries/$target.dict" ]]; then
    options+=("-dict=$root/fuzz/dictionaries/$target.dict")
  fi

  regressions=()
  if [[ -d "$root/fuzz/regressions/$target" ]]; then
    mapfile -t regressions < <(find "$root/fuzz/regressions/$target" -type f ! -name '.*' | sort)
  fi
  rc=0
  if ((${#regressions[@]} > 0)); then
    "$binary" "${options[@]}" "${regressions[@]}" >"$dir/regressions.log" 2>&1 || rc=$?
  fi
  if ((rc == 0)); then
    nice -n 10 "$binary" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      "$dir/corpus" >"$log" 2>&1 || rc=$?
  else
    log="$dir/regressions.log"
  fi

  if ((rc != 0)); then
    artifact=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -n 1 | cut -d' ' -f5 || true)
    echo "fuzz: $target FAILED (exit $rc); log: $log" >&2
    grep -E 'ERROR: |fuzz property broken|SUMMARY: ' "$log" | head -n 5 >&2 || true
    if [[ -n "$artifact" ]]; then
      echo "  artifact:  $artifact" >&2
      echo "  reproduce: $binary $artifact" >&2
    else
      echo "  reproduce: $binary ${options[*]} ${regressions[*]}" >&2
    fi
    failures+=("$target")
    continue
  fi
  printf 'fuzz: %-15s %10s execs %7s exec/s  cov: %-6s ft: %-7s corpus: %s files (%s)\n' \
    "$target" "$(final_stat "$log" number_of_executed_units)" \
    "$(final_stat "$log" average_exec_per_sec)" "$(status_field "$log" cov)" \
    "$(status_field "$log" ft)" "$(find "$dir/corpus" -type f | wc -l)" \
    "$(du -sh "$dir/corpus" | cut -f1)"
done

if ((${#failures[@]} > 0)); then
  echo "fuzz: ${#failures[@]} target(s) failed: ${failures[*]}; scratch kept in $work" >&2
  echo "  turn a finding into a regression: fuzz/README.md" >&2
  exit 1
fi
if ((keep_work == 0)); then
  rm -rf "$work"
fi
echo "fuzz: ${#targets[@]} target(s) clean, ${seconds}s each"
