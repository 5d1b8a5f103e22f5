#!/usr/bin/env bash
# Trace replay benchmark: every policy on
#   tiresias-60     the Tiresias trace (traces/) as it is, on its own cluster (n32g4);
#   tiresias-600    the same jobs ten times back to back, compressed in time to an offered load
#                   of 1.3 on n32g4 (bench/make_trace.py tiresias-scaled);
#   production-10k  10,000 jobs of a production GPU cluster's shape (bench/make_trace.py, seed 7,
#                   load 1.3) on 1,000 nodes of 8 GPUs.
# Writes bench/results/simulate/<name>/results.json and the plots, and timing.json: the wall
# time of each comparison (one process per policy, $PROCESSES at a time) with the load average
# before and after it, since other work on the machine stretches wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=bench/results/simulate
TRACES=${TRACES:-traces}  # the repository's own (scheduler_core/simulation/trace_files.py)
PROCESSES=${PROCESSES:-2}
ONLY=${ONLY:-}  # e.g. ONLY=production-10k to rerun one comparison
mkdir -p "$OUT"

"$PY" bench/make_trace.py production --out "$OUT/production-10k.csv"
"$PY" bench/make_trace.py tiresias-scaled --out "$OUT/tiresias-600.csv"

run() {  # name trace cluster
  [[ -n "$ONLY" && "$ONLY" != "$1" ]] && return 0
  local began ended before after
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  began=$(date +%s.%N)
  "$PY" manage.py simulate --trace "$2" --cluster "$3" --out "$OUT/$1" --processes "$PROCESSES"
  ended=$(date +%s.%N)
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  "$PY" bench/record_timing.py "$OUT/timing.json" "$1" "$began" "$ended" "$before" "$after" "$PROCESSES"
}

run tiresias-60 "$TRACES/tiresias-60-jobs.csv" n32g4
run tiresias-600 "$OUT/tiresias-600.csv" n32g4
run production-10k "$OUT/production-10k.csv" "1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}"
