#!/usr/bin/env python3
"""What bounding the cascade's streaming hold costs (cascade.max_hold_tokens).

With `cascade.streaming: hold` a streaming client sees nothing until the cascade decides. Held
for the whole answer, the first token waits for all of it; held for a prefix of N tokens, the
prefix decides: below the threshold the request escalates at once, otherwise the edge's answer
streams and a later escalation is a revision. This script measures, on real generations of the
shipped model, how often the prefix decision differs from the whole-answer decision:

  early escalations  the prefix escalated, the whole answer would have passed: a cloud call
                     the full hold would not have made (cost, not quality);
  revisions          the prefix passed, the whole answer escalates: the client saw edge text
                     that the cloud's answer then replaces (the quality is the cloud's, as with
                     the full hold; the client sees a revision event).

and the hold itself: N tokens at the model's measured decode rate, and at 30 tokens/s, a
phone-class device. The confidence is the gateway's (routing/confidence.cpp) with the default
weights, recomputed here from the per-token logprobs `tandem run --json` prints.

Usage: bench/cascade_hold.py [--samples 3] [--max-tokens 256] [--threshold median]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TANDEM = os.path.join(ROOT, "build", "tandem")
MODEL = os.path.join(ROOT, "models", "stories260K.gguf")
PROMPTS = os.path.join(ROOT, "bench", "data", "drift-prompts.txt")

# config::ConfidenceWeights defaults and routing/confidence.h's clamps.
BIAS = 1.753
MEAN_LOGPROB = 3.54
MIN_LOGPROB = -20.0
PREFIXES = [4, 8, 16, 32, 64]
DEVICE_RATE = 30.0  # tokens/s: the phone-class device


def combined(logprobs):
    mean = sum(max(lp, MIN_LOGPROB) for lp in logprobs) / len(logprobs)
    return 1.0 / (1.0 + math.exp(-(BIAS + MEAN_LOGPROB * mean)))


def generate(prompt, seed, max_tokens):
    out = subprocess.run(
        [TANDEM, "run", "-m", MODEL, "-p", prompt, "-n", str(max_tokens), "--temp", "0.8",
         "--seed", str(seed), "--threads", "1", "--json", "--top-logprobs", "0"],
        capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=3, help="generations per prompt")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--threshold", default="median",
                        help="a confidence, or 'median': the whole answers' median, so that "
                             "half escalate (the default weights are fitted to another model)")
    args = parser.parse_args()
    prompts = [line.strip() for line in open(PROMPTS, encoding="utf-8") if line.strip()]
    answers = []
    rates = []
    for prompt in prompts:
        for seed in range(args.samples):
            result = generate(prompt, seed, args.max_tokens)
            answers.append([t["logprob"] for t in result["tokens"]])
            rates.append(result["timings"]["decode_tokens_per_second"])
    rate = statistics.median(rates)
    lengths = [len(a) for a in answers]
    threshold = (statistics.median(combined(a) for a in answers)
                 if args.threshold == "median" else float(args.threshold))
    full_escalate = [combined(a) < threshold for a in answers]
    print(f"{len(answers)} answers of the shipped model ({len(prompts)} prompts x "
          f"{args.samples} seeds, temperature 0.8), {statistics.mean(lengths):.0f} tokens on "
          f"average; {sum(full_escalate)} escalate on the whole answer at threshold "
          f"{threshold:.3f}; decode {rate:.0f} tokens/s here")
    print()
    print("| max_hold_tokens | hold here (ms) | hold at 30 tok/s (s) | early escalations | "
          "revisions | same decision |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for n in PREFIXES + [0]:
        early = revisions = 0
        holds = []
        for answer, escalate in zip(answers, full_escalate):
            prefix = answer if n == 0 or n >= len(answer) else answer[:n]
            holds.append(len(prefix))
            prefix_escalates = combined(prefix) < threshold
            early += prefix_escalates and not escalate
            revisions += escalate and not prefix_escalates
        mean_hold = statistics.mean(holds)
        same = 1 - (early + revisions) / len(answers)
        label = "0 (whole answer)" if n == 0 else str(n)
        print(f"| {label} | {1000 * mean_hold / rate:.1f} | {mean_hold / DEVICE_RATE:.2f} | "
              f"{early / len(answers):.1%} | {revisions / len(answers):.1%} | {same:.1%} |")
        rows.append({"max_hold_tokens": n, "early_escalations": early, "revisions": revisions})
    json.dump({"answers": len(answers), "decode_tokens_per_second": rate, "rows": rows},
              sys.stderr)
    print(file=sys.stderr)


if __name__ == "__main__":
    main()
