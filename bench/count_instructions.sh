#!/usr/bin/env bash
# Instructions per decoded token, Tandem engine vs llama-bench, counted by callgrind.
#   bench/count_instructions.sh [MODEL.gguf]
# Unlike wall-clock figures this does not move with the machine's load: the same binaries and
# model give the same counts. Each tool generates N1 and N2 tokens (one thread); the
# difference divided by N2 - N1 is the cost of one more token, free of load-time costs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=${1:-$root/models/stories260K.gguf}
n1=100
n2=300

"$root/scripts/build.sh" >/dev/null
llama_prefix=$("$root/scripts/build-llama.sh" | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
count() {  # name n command...
  local name=$1 n=$2
  shift 2
  valgrind --tool=callgrind --callgrind-out-file="$work/$name-$n.out" "$@" >/dev/null 2>&1
  total "$work/$name-$n.out"
}

for n in $n1 $n2; do
  eval "tandem_$n=\$(count tandem $n \"$root/build/tandem\" run -m \"$model\" -p \"Once upon a time\" \
    --temp 0 --ignore-eos -n $n -t 1 -c 512)"
  eval "llama_$n=\$(count llama $n \"$llama_prefix/bin/llama-bench\" -m \"$model\" -p 0 -n $n -r 1 -t 1)"
done

tandem_per=$(((tandem_$n2 - tandem_$n1) / (n2 - n1)))
llama_per=$(((llama_$n2 - llama_$n1) / (n2 - n1)))
echo "| instructions per decoded token (callgrind, 1 thread) | llama-bench | Tandem engine | ratio |"
echo "| --- | ---: | ---: | ---: |"
printf '| %s | %d | %d | %.3f |\n' "$(basename "$model")" "$llama_per" "$tandem_per" \
  "$(echo "$tandem_per / $llama_per" | bc -l)"
