#!/usr/bin/env bash
# Replays without an oracle: gangsched (the policy that reads runtimes: least-work-first order
# and backfilling) and coscheduling (which reads none: the reference of the targets) under each
# --runtimes mode, on
#   tiresias-600    bench/make_trace.py tiresias-scaled, on n32g4 (users: the model names);
#   production-10k  bench/make_trace.py production, on 1,000 nodes of 8 GPUs (users drawn apart);
#   series-2k       bench/make_trace.py series: users sending series of the same job, 32 x 8 GPUs.
# Writes bench/results/simulate-runtimes/<trace>-<mode>/results.json (no plots) and summary.json
# (the figures docs/forecasts.md shows, with the date, the machine and the load average).
# ONLY=<trace> reruns one trace; MODES="limit learned" some modes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
TRACES=bench/results/simulate
OUT=bench/results/simulate-runtimes
PROCESSES=${PROCESSES:-2}
ONLY=${ONLY:-}
MODES=${MODES:-oracle limit learned}
mkdir -p "$OUT"

"$PY" bench/make_trace.py production --out "$TRACES/production-10k.csv"
"$PY" bench/make_trace.py tiresias-scaled --out "$TRACES/tiresias-600.csv"
"$PY" bench/make_trace.py series --out "$TRACES/series-2k.csv"

run() {  # name trace cluster
  [[ -n "$ONLY" && "$ONLY" != "$1" ]] && return 0
  for mode in $MODES; do
    "$PY" manage.py simulate --trace "$2" --cluster "$3" --out "$OUT/$1-$mode" --processes "$PROCESSES" \
      --policy gangsched --policy coscheduling --runtimes "$mode" >/dev/null
    rm -f "$OUT/$1-$mode"/*.png
    echo "$1 $mode done"
  done
}

before=$(cut -d' ' -f1-3 /proc/loadavg)
began=$(date +%s)
run tiresias-600 "$TRACES/tiresias-600.csv" n32g4
run production-10k "$TRACES/production-10k.csv" "1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}"
run series-2k "$TRACES/series-2k.csv" "32x{cpu=64,memory=512Gi,nvidia.com/gpu=8}"
"$PY" bench/runtimes_summary.py "$OUT" "$before" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(( $(date +%s) - began ))"
