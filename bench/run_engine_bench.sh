#!/usr/bin/env bash
# Edge engine vs llama.cpp's own llama-bench: same model, same threads, same build of
# llama.cpp, in one run.
#   bench/run_engine_bench.sh [MODEL.gguf] [THREADS] [ROUNDS]
# Shared machines change speed from one second to the next, so the two tools alternate in
# ROUNDS short rounds (default 10) and every ratio is taken within a round; the table gives
# the median over rounds with the lowest and highest in brackets. Raw JSON of both tools for
# every round is kept in build/bench/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=${1:-$root/models/stories260K.gguf}
threads=${2:-$(nproc)}
rounds=${3:-10}
gen=128
prompt=512
reps=3

"$root/scripts/build.sh" >/dev/null
llama_prefix=$("$root/scripts/build-llama.sh" | tail -n 1)
out="$root/build/bench"
rm -rf "$out/rounds" && mkdir -p "$out/rounds"

for ((round = 1; round <= rounds; round++)); do
  "$llama_prefix/bin/llama-bench" -m "$model" -t "$threads" -p "$prompt" -n "$gen" -r "$reps" \
    -o json >"$out/rounds/llama-$round.json" 2>/dev/null
  "$root/build/bench/engine_bench" -m "$model" -t "$threads" -p "$prompt" -n "$gen" -r "$reps" \
    >"$out/rounds/tandem-$round.json"
done

# One object per round: both tools' figures and the ratios within the round.
for ((round = 1; round <= rounds; round++)); do
  jq -n --slurpfile l "$out/rounds/llama-$round.json" --slurpfile t "$out/rounds/tandem-$round.json" \
    --argjson p "$prompt" '
    def median: sort as $s | $s[($s | length - 1) / 2 | floor];
    # The same statistic as engine_bench: the run of median time (llama-bench'"'"'s own avg_ts
    # is a mean of rates, which a noisy machine biases upwards).
    ($l[0] | map(select(.n_gen > 0 and .n_prompt == 0))[0] | .n_gen * 1e9 / (.samples_ns | median)) as $tg |
    ($l[0] | map(select(.n_prompt > 0 and .n_gen == 0))[0] | .n_prompt * 1e9 / (.samples_ns | median)) as $pp |
    $t[0] + {llama_tg: $tg, llama_ttft_ms: (1000 * $p / $pp),
             decode_ratio: ($t[0].decode_tokens_per_second / $tg),
             ttft_ratio: ((1000 * $p / $pp) / $t[0].time_to_first_token_ms),
             speedup: ($t[0].concurrent_throughput_tokens_per_second /
                       $t[0].sequential_throughput_tokens_per_second)}'
done | jq -s . >"$out/engine-vs-llama-bench.json"

jq -r --arg model "$(basename "$model")" \
  --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" '
  def r(x): (x * 100 | round) / 100;
  def med(f): (map(f) | sort) as $s | ($s | length) as $n |
    if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end;
  def span(f): "\(r(med(f))) [\(r(map(f) | min))–\(r(map(f) | max))]";
  "Model \($model), \(.[0].threads) threads, \(length) alternating rounds (each: llama-bench -r 3, then engine_bench -r 3; the median run of each), CPU: \($cpu)",
  "",
  "| measure | llama-bench | Tandem engine | Tandem / llama.cpp speed |",
  "| --- | ---: | ---: | ---: |",
  "| decode tokens/s (tg\(.[0].gen_tokens)) | \(span(.llama_tg)) | \(span(.decode_tokens_per_second)) | \(span(.decode_ratio)) |",
  "| time to first token, ms (pp\(.[0].prompt_tokens) + first token) | \(span(.llama_ttft_ms)) | \(span(.time_to_first_token_ms)) | \(span(.ttft_ratio)) |",
  "",
  "| \(.[0].concurrent) generations of \(.[0].gen_tokens) tokens | tokens/s |",
  "| --- | ---: |",
  "| one after another | \(span(.sequential_throughput_tokens_per_second)) |",
  "| concurrently, batched on one inference thread | \(span(.concurrent_throughput_tokens_per_second)) |",
  "| speed-up | \(span(.speedup))x |"
' "$out/engine-vs-llama-bench.json"
