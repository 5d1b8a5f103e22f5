#!/usr/bin/env bash
# Trace replay benchmark (issue 7): every policy on (a) the shared Tiresias trace on its own
# cluster (n32g4) and (b) a 10,000-job trace drawn from it (bench/make_trace.py, seeded) on
# 1,000 nodes of 8 GPUs. Writes bench/results/simulate/{tiresias-60,tiresias-10k}/results.json,
# the plots, and timing.txt (wall time of each comparison, 2 processes).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=bench/results/simulate
TRACES=${TRACES:-../shared/traces}
PROCESSES=${PROCESSES:-2}
mkdir -p "$OUT"

"$PY" bench/make_trace.py --jobs 10000 --nodes 1000 --gpus-per-node 8 --seed 7 --out "$OUT/tiresias-10k.csv"

run() {  # name trace cluster
  local began ended
  began=$(date +%s.%N)
  "$PY" manage.py simulate --trace "$2" --cluster "$3" --out "$OUT/$1" --processes "$PROCESSES"
  ended=$(date +%s.%N)
  printf '%s: %.1f s wall, %s processes, %s cores\n' "$1" "$(echo "$ended - $began" | bc)" \
    "$PROCESSES" "$(nproc)" | tee -a "$OUT/timing.txt"
}

: > "$OUT/timing.txt"
run tiresias-60 "$TRACES/tiresias-60-jobs.csv" n32g4
run tiresias-10k "$OUT/tiresias-10k.csv" "1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}"
