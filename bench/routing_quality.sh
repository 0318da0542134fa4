#!/usr/bin/env bash
# Regenerates every figure and table of docs/ROUTING_QUALITY.md from the labelled routing traces:
#   bench/routing_quality.sh [DATA_DIR]     (default: ../shared/data/routing beside the repo)
# TANDEM_BINARY picks the binary (default build/tandem; nothing is built here). Writes under
# docs/figures/routing-quality/:
#   <edge>-<cloud>.json / .svg         eval of the union of the 5 task files, --by-task
#   llama3.1-8b-llama3.1-405b-<task>.json / .svg   eval of one task file on its own
#   three-tier-llama3.2-3b-llama3.1-8b-llama3.1-405b.json / .svg
#   routellm-mmlu-classifier.json / .svg
#   calibration-transfer.json          calibrate --target-quality 0.95, seeds 0..19, per pair
#   tables.md                          the markdown tables the document quotes
#   left-out-router.txt                `tandem router train` of the shipped weights: each task
#                                      and each source left out, beside the length baseline
#   left-out-cascade.txt               `tandem eval --left-out-tasks` and `tandem calibrate
#                                      --left-out-tasks` per pair: what holds on unseen tasks
#   common-sense.txt                   the task model's training report (each pair file left
#                                      out), the shipped classifier with a task model trained
#                                      without each file, the golden pairs and the fresh pairs
#   default-gate.txt                   the default pattern (`gated`: the ingress gate in front of
#                                      the cascade) at several gate widths, per pair, beside
#                                      the cascade alone: how wide the default gate may be
#   learned-vs-confidence.json         only with ROUTING_QUALITY_NOISE=1 (about a minute
#                                      more): how much of learned - confidence is noise
# The JSON files are `tandem eval --json` with the per-point curves removed (the SVGs draw
# them; rerun the printed command with --json for the points). Each tandem call takes well
# under a second; the whole script about 15 s.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data_arg=${1:-$root/../shared/data/routing}
if [[ ! -d "$data_arg" ]]; then
  echo "routing_quality: no data directory at $data_arg" >&2
  exit 1
fi
data=$(cd "$data_arg" && pwd)
tandem=${TANDEM_BINARY:-$root/build/tandem}
if [[ ! -x "$tandem" ]]; then
  echo "routing_quality: $tandem is not an executable (set TANDEM_BINARY or build first)" >&2
  exit 1
fi
out=$root/docs/figures/routing-quality
mkdir -p "$out"

tasks=(gsm8k medmcqa mmlu triviaqa truthfulqa)
# edge cloud file-family
pairs=("llama3.1-8b llama3.1-405b llama" "llama3.2-3b llama3.1-405b llama" "gpt-4o-mini gpt-4o qwen-oai")
routellm_edge=mistralai/Mixtral-8x7B-Instruct-v0.1
routellm_cloud=gpt-4-1106-preview
seeds=$(seq 0 19)

files_of() {  # family -> the 5 task files
  local family=$1 task
  for task in "${tasks[@]}"; do
    printf '%s\n' "$data/cascade-$family-$task-train.jsonl"
  done
}

# eval, keeping the JSON without its curves: strip_json FILE < json
strip_json() {
  python3 -c '
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k != "curve"}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
report = json.load(sys.stdin)
# The three-tier curve also gives the middle tier'"'"'s share at the 95% point: keep that.
tt = report.get("three_tier")
if tt and tt.get("curve"):
    target = 0.95 * tt["cloud_quality"]
    curve = tt["curve"]
    for a, b in zip(curve, curve[1:]):
        if b["quality"] + 1e-12 >= target:
            rise = b["quality"] - a["quality"]
            t = min(max((target - a["quality"]) / rise, 0.0), 1.0) if rise > 0 else 1.0
            if a["quality"] + 1e-12 >= target:
                t = 0.0
            mid = a.get("mid_share", 0.0) + t * (b.get("mid_share", 0.0) - a.get("mid_share", 0.0))
            cloud = a["cloud_share"] + t * (b["cloud_share"] - a["cloud_share"])
            report["three_tier_at_95_derived"] = {
                "cloud_share": round(cloud, 6), "mid_share": round(mid, 6),
                "edge_share": round(1 - cloud - mid, 6)}
            break
json.dump(strip(report), open(sys.argv[1], "w"), indent=2)
print(file=open(sys.argv[1], "a"))
' "$1"
}

echo "routing_quality: data $data, binary $tandem" >&2

# 1. Each pair on the union of the 5 tasks, with the per-task breakdown.
for pair in "${pairs[@]}"; do
  read -r edge cloud family <<<"$pair"
  mapfile -t files < <(files_of "$family")
  name=$edge-$cloud
  "$tandem" eval --data "${files[@]}" --edge "$edge" --cloud "$cloud" --by-task --json \
    --plot "$out/$name.svg" --title "$edge -> $cloud, 5 tasks (union)" | strip_json "$out/$name.json"
  echo "  $name.json, $name.svg" >&2
done

# 2. One plot per task for llama3.1-8b -> llama3.1-405b (each task file evaluated on its own:
# the learned policies are cross-fitted on that task's rows only).
for task in "${tasks[@]}"; do
  name=llama3.1-8b-llama3.1-405b-$task
  "$tandem" eval --data "$data/cascade-llama-$task-train.jsonl" --edge llama3.1-8b \
    --cloud llama3.1-405b --json --plot "$out/$name.svg" \
    --title "llama3.1-8b -> llama3.1-405b, $task" | strip_json "$out/$name.json"
  echo "  $name.json, $name.svg" >&2
done

# 3. The three-tier cascade.
mapfile -t files < <(files_of llama)
name=three-tier-llama3.2-3b-llama3.1-8b-llama3.1-405b
"$tandem" eval --data "${files[@]}" --edge llama3.2-3b --mid llama3.1-8b --cloud llama3.1-405b \
  --json --plot "$out/$name.svg" --title "llama3.2-3b -> llama3.1-8b -> llama3.1-405b, 5 tasks" |
  strip_json "$out/$name.json"
echo "  $name.json, $name.svg" >&2

# 4. The ingress classifier on RouteLLM's MMLU responses (no confidence: classifier only).
name=routellm-mmlu-classifier
"$tandem" eval --data "$data/routellm-mmlu.jsonl" --edge "$routellm_edge" --cloud "$routellm_cloud" \
  --json --plot "$out/$name.svg" --title "Mixtral-8x7B -> GPT-4 (RouteLLM MMLU)" |
  strip_json "$out/$name.json"
echo "  $name.json, $name.svg" >&2

# 5. Calibration transfer: fit for 95% of the cloud's quality on 70% of the rows (hash split,
# salted by the seed), measure on the other 30%.
runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
for pair in "${pairs[@]}"; do
  read -r edge cloud family <<<"$pair"
  mapfile -t files < <(files_of "$family")
  for seed in $seeds; do
    "$tandem" calibrate --data "${files[@]}" --edge "$edge" --cloud "$cloud" \
      --target-quality 0.95 --seed "$seed" --json >"$runs/$edge-$cloud-$seed.json"
  done
done
python3 - "$runs" "$out/calibration-transfer.json" "$seeds" "${pairs[@]}" <<'PY'
import json, math, statistics, sys
runs_dir, target_file, seeds = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split()]
pairs = [p.split() for p in sys.argv[4:]]

def stats(values, band=None):
    s = {"mean": round(statistics.mean(values), 6),
         "std": round(statistics.stdev(values), 6),  # sample standard deviation (n - 1)
         "min": round(min(values), 6), "max": round(max(values), 6)}
    if band:
        low, high = band
        s["share_within_95_pm_1"] = round(sum(low <= v <= high for v in values) / len(values), 6)
    return s

summary = {"command": "tandem calibrate --data <5 task files> --edge E --cloud C "
                      "--target-quality 0.95 --seed S --json (fit share 0.7)",
           "target_quality_vs_cloud": 0.95, "seeds": seeds, "pairs": {}}
for edge, cloud, _ in pairs:
    runs = []
    for seed in seeds:
        r = json.load(open(f"{runs_dir}/{edge}-{cloud}-{seed}.json"))
        exp = r["expected"]["quality_vs_cloud"]
        runs.append({"seed": seed, "per_kind": r["per_kind"], "fit_rows": r["rows"]["fit"],
                     "check_rows": r["rows"]["check"],
                     "expected_quality_vs_cloud": exp,
                     "check_quality_vs_cloud": r["check"]["quality_vs_cloud"],
                     "check_cloud_share": r["check"]["cloud_share"],
                     "check_cost_saved": r["check"]["cost_saved"],
                     "check_quality": r["check"]["quality"]})
    q = [r["check_quality_vs_cloud"] for r in runs]
    share = [r["check_cloud_share"] for r in runs]
    n_check = statistics.mean(r["check_rows"] for r in runs)
    n_fit = statistics.mean(r["fit_rows"] for r in runs)
    # Noise one would see with a perfectly calibrated rule. (a) naive binomial: the routed
    # answers' quality q = 0.95 C as a Bernoulli mean over n_check rows, divided by the cloud's
    # quality C (ignores that routed and cloud answers coincide on escalated rows, so it is an
    # upper bound). (b) paired: the tool's bootstrap interval on the fit rows (decisions fixed,
    # ratio resampled) as a standard error, scaled to the check set; the threshold is set on
    # the fit rows, so the check result differs from 95% by a difference of two disjoint
    # sample means: sd = se_fit * sqrt(1 + n_fit / n_check).
    cloud_q = statistics.mean(r["check_quality"] / r["check_quality_vs_cloud"] for r in runs)
    p = 0.95 * cloud_q
    naive = math.sqrt(p * (1 - p) / n_check) / cloud_q
    se_fit = statistics.mean((r["expected_quality_vs_cloud"]["high"] -
                              r["expected_quality_vs_cloud"]["low"]) / (2 * 1.959964) for r in runs)
    se_check = se_fit * math.sqrt(n_fit / n_check)
    sd_transfer = se_fit * math.sqrt(1 + n_fit / n_check)
    within = lambda sd: math.erf(0.01 / (sd * math.sqrt(2)))
    summary["pairs"][f"{edge}->{cloud}"] = {
        "check_quality_vs_cloud": stats(q, (0.94, 0.96)),
        "check_cloud_share": stats(share),
        "check_cost_saved": stats([r["check_cost_saved"] for r in runs]),
        "per_kind_chosen": sum(r["per_kind"] for r in runs),
        "rows": {"fit_mean": round(n_fit, 1), "check_mean": round(n_check, 1)},
        "expected_noise": {
            "naive_binomial_se_check": round(naive, 6),
            "bootstrap_se_fit": round(se_fit, 6),
            "bootstrap_se_check": round(se_check, 6),
            "predicted_sd_fit_then_check": round(sd_transfer, 6),
            "share_within_95_pm_1_if_unbiased": round(within(sd_transfer), 6)},
        "runs": runs}
json.dump(summary, open(target_file, "w"), indent=2)
print(file=open(target_file, "a"))
PY
echo "  calibration-transfer.json" >&2

# 6. The markdown tables.
python3 - "$out" "${pairs[@]}" <<'PY' >"$out/tables.md"
import json, sys
out, pairs = sys.argv[1], [p.split() for p in sys.argv[2:]]
policies = ["confidence", "learned", "classifier", "combined", "gated", "random", "oracle"]
tasks = ["gsm8k", "medmcqa", "mmlu", "triviaqa", "truthfulqa"]
def f(v, digits=3):
    return "–" if v is None else f"{v:.{digits}f}"
def row(scope, name, s):
    return (f"| {scope} | {name} | {f(s['apgr'])} | {f(s['cpt50'])} | {f(s['cpt80'])} | "
            f"{f(s['cpt95'])} | {f(s['edge_share_at_95'])} | {f(s['cost_saved_at_95'])} |")
head = ("| rows | policy | APGR | CPT50 | CPT80 | CPT95 | edge@95 | saved@95 |\n"
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
print("<!-- generated by bench/routing_quality.sh; do not edit -->")
for edge, cloud, _ in pairs:
    r = json.load(open(f"{out}/{edge}-{cloud}.json"))
    print(f"\n### {edge} -> {cloud}\n")
    print(head)
    scope = (f"**union** ({r['rows']['used']}; edge {r['edge_quality']:.3f}, "
             f"cloud {r['cloud_quality']:.3f})")
    for name in policies:
        s = r["policies"].get(name) or r["baselines"].get(name)
        print(row(scope, name, s))
        scope = ""
    for task in tasks:
        t = r["tasks"][task]
        any_s = t["policies"]["random"]
        kinds = ", ".join(f"{k} {n}" for k, n in t["kinds"].items())
        scope = (f"{task} ({t['rows']}; edge {any_s['edge_quality']:.3f}, cloud "
                 f"{any_s['cloud_quality']:.3f}; kinds: {kinds})")
        for name in policies:
            print(row(scope, name, t["policies"][name]))
            scope = ""

print("\n### learned − confidence, APGR\n")
print("| pair | union | " + " | ".join(tasks) + " |")
print("| --- | ---: | " + " | ".join("---:" for _ in tasks) + " |")
for edge, cloud, _ in pairs:
    r = json.load(open(f"{out}/{edge}-{cloud}.json"))
    d = [r["policies"]["learned"]["apgr"] - r["policies"]["confidence"]["apgr"]]
    d += [r["tasks"][t]["policies"]["learned"]["apgr"] - r["tasks"][t]["policies"]["confidence"]["apgr"]
          for t in tasks]
    print(f"| {edge} -> {cloud} | " + " | ".join(f"{x:+.3f}" for x in d) + " |")

print("\n### llama3.1-8b -> llama3.1-405b, each task file evaluated on its own (per-task plots)\n")
print("| task | " + " | ".join(policies) + " |")
print("| --- | " + " | ".join("---:" for _ in policies) + " |")
for task in tasks:
    r = json.load(open(f"{out}/llama3.1-8b-llama3.1-405b-{task}.json"))
    vals = [(r["policies"].get(n) or r["baselines"].get(n))["apgr"] for n in policies]
    print(f"| {task} | " + " | ".join(f(v) for v in vals) + " |")

r = json.load(open(f"{out}/three-tier-llama3.2-3b-llama3.1-8b-llama3.1-405b.json"))
print("\n### three tiers: llama3.2-3b -> llama3.1-8b -> llama3.1-405b (union)\n")
print(f"edge quality {r['edge_quality']:.3f}, mid quality {r['mid_quality']:.3f}, "
      f"cloud quality {r['cloud_quality']:.3f}\n")
print(head)
for name in policies:
    s = r["policies"].get(name) or r["baselines"].get(name)
    if s is not None:
        print(row("3b -> 405b" if name == "confidence" else "", name, s))
print(row("3b -> 8b -> 405b", "three_tier", r["three_tier"]))
at = r.get("three_tier_at_95_derived")
if at:
    print(f"\nthree_tier at 95% of the cloud's quality: edge {at['edge_share']:.3f}, "
          f"mid {at['mid_share']:.3f}, cloud {at['cloud_share']:.3f}")

r = json.load(open(f"{out}/routellm-mmlu-classifier.json"))
print("\n### RouteLLM MMLU: Mixtral-8x7B-Instruct -> gpt-4-1106-preview\n")
print(f"{r['rows']['used']} queries; edge quality {r['edge_quality']:.3f}, "
      f"cloud quality {r['cloud_quality']:.3f}; no costs in the data (saved@95 is 0 by construction)\n")
print(head)
for name in ["classifier", "random", "oracle"]:
    s = r["policies"].get(name) or r["baselines"].get(name)
    print(row("MMLU" if name == "classifier" else "", name, s))

c = json.load(open(f"{out}/calibration-transfer.json"))
print("\n### calibration transfer: --target-quality 0.95, seeds 0..19, check rows\n")
print("| pair | check rows | quality vs cloud: mean | std | min | max | within 95 ± 1 | "
      "cloud share: mean | std | min | max | predicted sd | within ± 1 if unbiased |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for key, p in c["pairs"].items():
    q, s, n = p["check_quality_vs_cloud"], p["check_cloud_share"], p["expected_noise"]
    pct = lambda v: f"{100 * v:.2f}"
    print(f"| {key} | {p['rows']['check_mean']:.0f} | {pct(q['mean'])} | {pct(q['std'])} | "
          f"{pct(q['min'])} | {pct(q['max'])} | {q['share_within_95_pm_1']:.2f} | "
          f"{s['mean']:.3f} | {s['std']:.3f} | {s['min']:.3f} | {s['max']:.3f} | "
          f"{pct(n['predicted_sd_fit_then_check'])} | {n['share_within_95_pm_1_if_unbiased']:.2f} |")
PY
echo "  tables.md" >&2

# 6b. What generalises: the shipped classifier's training command (its left-out report; the
# weights go to a temporary file) and the cascade's left-out figures.
weights_tmp=$(mktemp)
"$tandem" router train \
  --data "$data"/cascade-llama-{gsm8k,medmcqa,mmlu,triviaqa,truthfulqa}-train.jsonl \
  --data "$data/dcrouter-train.jsonl" --data "$data/routellm-mmlu.jsonl" \
  --edge llama3.1-8b --cloud llama3.1-405b \
  --pair mistral-7b-instruct-v0.3,llama-3.1-nemotron-51b-instruct \
  --pair "$routellm_edge,$routellm_cloud" --out "$weights_tmp" |
  sed -e "s|$data/||g" -e "s|$weights_tmp|(a temporary file)|" >"$out/left-out-router.txt"
rm -f "$weights_tmp"
echo "  left-out-router.txt" >&2
: >"$out/left-out-cascade.txt"
for pair in "${pairs[@]}"; do
  read -r edge cloud family <<<"$pair"
  mapfile -t files < <(files_of "$family")
  {
    echo "### $edge -> $cloud: eval --left-out-tasks --by-task"
    "$tandem" eval --data "${files[@]}" --edge "$edge" --cloud "$cloud" --by-task --left-out-tasks
    echo
    echo "### $edge -> $cloud: calibrate --target-quality 0.95 --left-out-tasks"
    "$tandem" calibrate --data "${files[@]}" --edge "$edge" --cloud "$cloud" \
      --target-quality 0.95 --left-out-tasks
    echo
  } | sed -e "s|$data/||g" >>"$out/left-out-cascade.txt"
done
echo "  left-out-cascade.txt" >&2

# 6c. How wide the default pattern's ingress gate may be: `gated` (the classifier's picks to the
# cloud first, the raw cascade for the rest) at several gate widths, beside the cascade alone,
# for every edge of the cascade traces (the 1B edge too: the closest to an on-device model).
gate_pairs=("llama3.2-1b llama3.1-405b llama" "${pairs[@]}")
gate_config=$(mktemp --suffix=.yaml)
{
  echo "APGR / saved@95 (cost saved at 95% of the cloud's quality) on the union of the 5 tasks"
  printf '%-28s' "gate (ingress.cloud_share)"
  for pair in "${gate_pairs[@]}"; do
    read -r edge cloud _ <<<"$pair"
    printf ' | %-24s' "$edge -> $cloud"
  done
  echo
  for share in none 0.01 0.02 0.05 0.1 0.3; do
    printf '%-28s' "$share"
    for pair in "${gate_pairs[@]}"; do
      read -r edge cloud family <<<"$pair"
      mapfile -t files < <(files_of "$family")
      policy=gated
      [[ $share == none ]] && policy=confidence
      printf 'cloud:\n  upstreams:\n    - {name: c, base_url: "http://127.0.0.1:9/v1", models: {m: m}}\nrouting: {ingress: {cloud_share: %s}}\n' \
        "${share/none/0.3}" >"$gate_config"
      figures=$("$tandem" eval --data "${files[@]}" --edge "$edge" --cloud "$cloud" \
        --policy "$policy" --config "$gate_config" --json --no-progress |
        jq -r --arg p "$policy" '.policies[$p] | "\(.apgr) \(.cost_saved_at_95)"')
      read -r apgr saved <<<"$figures"
      printf ' | %-24s' "$(printf '%.3f / %.3f' "$apgr" "$saved")"
    done
    echo
  done
} >"$out/default-gate.txt"
rm -f "$gate_config"
echo "  default-gate.txt" >&2

# 6d. Common sense: prompt pairs where one is plainly harder (the task model's training data,
# each file left out; then the golden and the fresh pairs, which nothing is trained on).
pair_files=("$root"/bench/data/router_dev_pairs*.jsonl)
task_tmp=$(mktemp)
{
  echo "### tandem router train-task (the shipped task model's command, into a temporary file)"
  "$tandem" router train-task $(printf -- '--pairs %s ' "${pair_files[@]}") --out "$task_tmp"
  echo
  echo "### the shipped classifier, scored with a task model trained without the file scored"
  for held in "${pair_files[@]}"; do
    others=()
    for file in "${pair_files[@]}"; do
      [[ "$file" != "$held" ]] && others+=(--pairs "$file")
    done
    "$tandem" router train-task "${others[@]}" --out "$task_tmp" >/dev/null
    "$tandem" router pairs --pairs "$held" --task-model "$task_tmp" | tail -n +3
  done
  echo
  echo "### the golden pairs (tests/routing/cases/golden_pairs.jsonl), the shipped models"
  "$tandem" router pairs --pairs "$root/tests/routing/cases/golden_pairs.jsonl"
  echo
  echo "### fresh pairs (bench/data/router_fresh_pairs*.jsonl: written after the shipped models,"
  echo "### never trained or tuned on), the shipped models; misordered pairs listed"
  for fresh in "$root"/bench/data/router_fresh_pairs*.jsonl; do
    "$tandem" router pairs --pairs "$fresh" --list
  done
} | sed -e "s|$root/||g" -e "s|$task_tmp|(a temporary file)|" >"$out/common-sense.txt"
rm -f "$task_tmp"
echo "  common-sense.txt" >&2

# 7. Optional (ROUTING_QUALITY_NOISE=1): is learned - confidence, in APGR, more than noise? An
# out-of-tree re-implementation of the learned policy's cross-fitting (features: mean logprob,
# log doubt, log(1 + answer tokens); damped-Newton logistic fit, L2 1 on the weights and
# 1e-3 on the bias, with sign constraints, a feature whose weight
# has the wrong sign dropped and the rest refitted; 5 folds by row hash; per-kind rule: the
# code in src/eval/) that must reproduce the binary's seed-0 figures, then (a) the learned
# APGR over 10 fold assignments (the row hash salted by seeds 0..9), (b) a paired bootstrap of
# the difference (rows resampled, scores fixed), (c) learned with each task's rows given their
# task's kind (no misdetected kinds).
# Query kinds come from `tandem route --json` for each distinct prompt.
if [[ "${ROUTING_QUALITY_NOISE:-0}" == 1 ]]; then
  python3 - "$tandem" "$data" "$out" "${pairs[@]}" <<'PY'
import glob, json, math, random, statistics, subprocess, sys
tandem, data, out = sys.argv[1], sys.argv[2], sys.argv[3]
pairs = [p.split() for p in sys.argv[4:]]
tasks = ["gsm8k", "medmcqa", "mmlu", "triviaqa", "truthfulqa"]
family_kind = {"gsm8k": "math", "medmcqa": "multiple_choice", "mmlu": "multiple_choice",
               "triviaqa": "factoid", "truthfulqa": "factoid"}
M64 = (1 << 64) - 1

def fnv(text):
    h = 14695981039346656037
    for b in text.encode():
        h = ((h ^ b) * 1099511628211) & M64
    return h

def mix(x):
    x ^= x >> 30; x = (x * 0xbf58476d1ce4e5b9) & M64
    x ^= x >> 27; x = (x * 0x94d049bb133111eb) & M64
    return x ^ (x >> 31)

def fold_of(row_id, seed):
    return mix(mix(fnv(row_id) ^ mix((seed + 0x9e3779b97f4a7c15) & M64)) ^ 0x5bd1e995) % 5

def sigmoid(z):
    return 1 / (1 + math.exp(-z)) if z > -700 else 0.0

def features(s):  # eval/calibration.cpp: mean logprob, log doubt, log(1 + answer tokens)
    lp = s["lp"]
    return [min(max(lp, -20.0), 0.0), math.log(min(max(-lp, 1e-6), 20.0)),
            math.log1p(max(s["tokens"], 0.0))]

SIGNS = [+1, -1, 0]  # the direction each feature may push P(good); 0: either

def solve(a, b):
    n = len(b); a = [r[:] for r in a]; b = b[:]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        if abs(a[p][c]) < 1e-12:
            return None
        a[c], a[p] = a[p], a[c]; b[c], b[p] = b[p], b[c]
        for r in range(c + 1, n):
            f = a[r][c] / a[c][c]
            for k in range(c, n):
                a[r][k] -= f * a[c][k]
            b[r] -= f * b[c]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - sum(a[i][k] * x[k] for k in range(i + 1, n))) / a[i][i]
    return x

BIAS_PENALTY = 1e-3  # eval/logistic.cpp: the bias is penalised too, 1e-3 x l2

def objective(xs, ys, theta, l2):  # the penalised negative log-likelihood
    loss = 0.0
    for x, y in zip(xs, ys):
        z = sum(t * f for t, f in zip(theta, [1.0] + x))
        loss += max(z, 0.0) + math.log1p(math.exp(-abs(z))) - y * z
    for i, t in enumerate(theta):
        loss += 0.5 * (BIAS_PENALTY * l2 if i == 0 else l2) * t * t
    return loss

def fit(xs, ys, l2=1.0):  # damped Newton, L2 on the weights and 1e-3 L2 on the bias (eval/logistic.cpp)
    n = 1 + (len(xs[0]) if xs else 0)
    mean = sum(ys) / len(ys)
    clipped = min(max(mean, 1e-4), 1 - 1e-4)
    theta = [math.log(clipped / (1 - clipped))] + [0.0] * (n - 1)
    if mean <= 0 or mean >= 1:
        return theta
    for _ in range(50):
        g = [0.0] * n; h = [[0.0] * n for _ in range(n)]
        for x, y in zip(xs, ys):
            v = [1.0] + x
            p = sigmoid(sum(t * f for t, f in zip(theta, v)))
            w = max(p * (1 - p), 1e-9)
            for i in range(n):
                g[i] += (p - y) * v[i]
                for j in range(i, n):
                    h[i][j] += w * v[i] * v[j]
        for i in range(n):
            penalty = BIAS_PENALTY * l2 if i == 0 else l2
            g[i] += penalty * theta[i]; h[i][i] += penalty + 1e-9
        for i in range(n):
            for j in range(i):
                h[i][j] = h[j][i]
        step = solve(h, g)
        if step is None:
            break
        # Damped Newton: halve the step until the objective decreases (at most 40 halvings;
        # the last try is kept either way, as in the binary).
        before = objective(xs, ys, theta, l2)
        scale = 1.0
        for _ in range(40):
            nxt = [t - scale * s for t, s in zip(theta, step)]
            if objective(xs, ys, nxt, l2) <= before:
                break
            scale /= 2
        largest = max(abs(a - b) for a, b in zip(nxt, theta))
        theta = nxt
        if largest < 1e-10:
            break
    return theta

def fit_signed(xs, ys):  # a weight of the wrong sign: drop that feature, refit the rest
    active = [True] * len(SIGNS)
    for _ in range(len(SIGNS) + 1):
        keep = [f for f in range(len(SIGNS)) if active[f]]
        t = fit([[x[f] for f in keep] for x in xs], ys)
        full = [t[0]] + [0.0] * len(SIGNS)
        violated = False
        for i, f in enumerate(keep):
            full[1 + f] = t[1 + i]
            if full[1 + f] * SIGNS[f] < 0:
                active[f] = False; violated = True
        if not violated:
            return full
    return [0.0] * (1 + len(SIGNS))

def calibration(train):
    pooled = fit_signed([features(s) for s in train], [s["e"] for s in train])
    pooled_cloud = sum(s["c"] for s in train) / len(train)
    by_kind = {}
    for kind in set(s["kind"] for s in train):
        rows = [s for s in train if s["kind"] == kind]
        if len(rows) < 40:
            continue
        good = sum(s["e"] for s in rows)
        w = pooled if good < 5 or good > len(rows) - 5 else \
            fit_signed([features(s) for s in rows], [s["e"] for s in rows])
        by_kind[kind] = (w, sum(s["c"] for s in rows) / len(rows))
    return pooled, pooled_cloud, by_kind

def gain(cal, s):
    w, cloud = cal[2].get(s["kind"], (cal[0], cal[1]))
    return cloud - sigmoid(w[0] + sum(a * b for a, b in zip(w[1:], features(s))))

def cross_fitted(samples, seed):
    folds = [fold_of(s["id"], seed) for s in samples]
    need = [0.0] * len(samples)
    for f in range(5):
        cal = calibration([s for s, g in zip(samples, folds) if g != f])
        for i, s in enumerate(samples):
            if folds[i] == f:
                need[i] = gain(cal, s)
    return need

def apgr(need, e, c):  # the exact curve of eval/curve.cpp
    n = len(e); order = sorted(range(n), key=lambda i: -need[i])
    q = sum(e); points = [(0.0, q / n)]; i = 0
    while i < n:
        j = i
        while j < n and need[order[j]] == need[order[i]]:
            q += c[order[j]] - e[order[j]]; j += 1
        points.append((j / n, q / n)); i = j
    eq, cq = sum(e) / n, sum(c) / n
    return sum((x1 - x0) * ((y0 + y1) / 2 - eq) / (cq - eq)
               for (x0, y0), (x1, y1) in zip(points, points[1:]))

kinds = {}
def kind_of(system, prompt):
    key = (system or "", prompt)
    if key not in kinds:
        args = [tandem, "route", "--json"] + (["--system", system] if system else []) + [prompt]
        kinds[key] = json.loads(subprocess.run(args, capture_output=True, text=True,
                                               check=True).stdout)["signals"]["kind"]
    return kinds[key]

result = {"fold_seeds": list(range(10)), "bootstrap": 300, "pairs": {}}
rng = random.Random(1)
for edge, cloud, family in pairs:
    samples = []
    for task in tasks:
        for line in open(f"{data}/cascade-{family}-{task}-train.jsonl"):
            r = json.loads(line)
            samples.append({"id": r["id"], "task": r["task"],
                            "kind": kind_of(r.get("system"), r["prompt"]),
                            "lp": r["models"][edge]["confidence"],
                            "tokens": 1 if r["models"][edge].get("tokens_out") is None
                                      else r["models"][edge]["tokens_out"],
                            "e": r["models"][edge]["score"], "c": r["models"][cloud]["score"]})
    tool = json.load(open(f"{out}/{edge}-{cloud}.json"))
    raw = [-s["lp"] for s in samples]
    by_seed = [cross_fitted(samples, seed) for seed in range(10)]
    family = cross_fitted([dict(s, kind=family_kind[s["task"]]) for s in samples], 0)
    scopes = {}
    for scope in ["union"] + tasks:
        idx = [i for i, s in enumerate(samples) if scope == "union" or s["task"] == scope]
        e = [samples[i]["e"] for i in idx]; c = [samples[i]["c"] for i in idx]
        conf = apgr([raw[i] for i in idx], e, c)
        learned = [apgr([need[i] for i in idx], e, c) for need in by_seed]
        want = (tool["policies"] if scope == "union" else tool["tasks"][scope]["policies"])["learned"]["apgr"]
        if abs(learned[0] - want) > 5e-4:
            sys.exit(f"routing_quality: the re-implementation gives learned APGR {learned[0]:.4f} "
                     f"for {edge} {scope}, the binary {want:.4f}: update stage 7")
        diffs = []
        for _ in range(300):
            pick = [rng.choice(idx) for _ in idx]
            pe = [samples[i]["e"] for i in pick]; pc = [samples[i]["c"] for i in pick]
            if sum(pc) > sum(pe):
                diffs.append(apgr([by_seed[0][i] for i in pick], pe, pc) -
                             apgr([raw[i] for i in pick], pe, pc))
        scopes[scope] = {
            "net_gap_rows": round(sum(c) - sum(e), 1),
            "confidence": round(conf, 6), "learned": round(learned[0], 6),
            "difference": round(learned[0] - conf, 6),
            "difference_bootstrap_sd": round(statistics.stdev(diffs), 6),
            "learned_over_fold_seeds": {"mean": round(statistics.mean(learned), 6),
                                        "sd": round(statistics.stdev(learned), 6),
                                        "min": round(min(learned), 6), "max": round(max(learned), 6),
                                        "seeds_beating_confidence": sum(v > conf for v in learned)},
            "learned_kind_from_task": round(apgr([family[i] for i in idx], e, c), 6)}
    result["pairs"][f"{edge}->{cloud}"] = scopes
json.dump(result, open(f"{out}/learned-vs-confidence.json", "w"), indent=2)
print(file=open(f"{out}/learned-vs-confidence.json", "a"))
with open(f"{out}/tables.md", "a") as md:
    md.write("\n### learned vs confidence: noise (ROUTING_QUALITY_NOISE=1)\n\n")
    md.write("| pair | rows | net gap rows | confidence | learned | diff | bootstrap sd of diff | "
             "learned over 10 fold seeds: mean [min, max] | seeds > confidence | learned, kind = task's |\n")
    md.write("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for key, scopes in result["pairs"].items():
        for scope, s in scopes.items():
            f = s["learned_over_fold_seeds"]
            md.write(f"| {key} | {scope} | {s['net_gap_rows']:.0f} | {s['confidence']:.3f} | "
                     f"{s['learned']:.3f} | {s['difference']:+.3f} | {s['difference_bootstrap_sd']:.3f} | "
                     f"{f['mean']:.3f} [{f['min']:.3f}, {f['max']:.3f}] | "
                     f"{f['seeds_beating_confidence']}/10 | {s['learned_kind_from_task']:.3f} |\n")
PY
  echo "  learned-vs-confidence.json (tables.md extended)" >&2
fi
