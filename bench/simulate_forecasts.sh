#!/usr/bin/env bash
# How accurate start-time forecasts are, in the trace replay (manage.py simulate --forecasts).
#
# gangsched forecasts each waiting job's start at its submission and every hour while it waits,
# on the replay's own state; each forecast is judged against the start that came, for waits over
# 5 minutes, per job size, beside a Slurm-style plan on users' limits (what squeue --start says).
# The traces are bench/simulate_runtimes.sh's (bench/make_trace.py, seeded):
#   production-10k  1,000 nodes of 8 GPUs;   tiresias-600  n32g4;
# under --runtimes $MODE (learned), each once per arrival window in $WINDOWS: 0 (the forecast
# assumes nothing more is submitted) and the calibrated one (docs/forecasts.md says on what).
# Forecast calls at most every $GAP virtual seconds (10).
# Writes bench/results/simulate-forecasts/<trace>-w<window>/results.json (no plots), timing.json
# and summary.json (the figures docs/forecasts.md shows, with the date, machine and load); with
# MODE=oracle or limit, under bench/results/simulate-forecasts/<mode>/.
#
# ONLY=<trace> runs one trace. Run it niced on a shared machine: nice -n 10 bench/simulate_forecasts.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
TRACES=bench/results/simulate
MODE=${MODE:-learned}
OUT=bench/results/simulate-forecasts  # another mode's runs go to its own directory below it
[[ "$MODE" == learned ]] || OUT=$OUT/$MODE
GAP=${GAP:-10}
WINDOWS=${WINDOWS:-0 120}
ONLY=${ONLY:-}
mkdir -p "$OUT"

run() {  # name trace cluster
  [[ -n "$ONLY" && "$ONLY" != "$1" ]] && return 0
  local window began ended before after
  for window in $WINDOWS; do
    before=$(cut -d' ' -f1-3 /proc/loadavg)
    began=$(date +%s.%N)
    "$PY" manage.py simulate --trace "$2" --cluster "$3" --out "$OUT/$1-w$window" --processes 1 \
      --policy gangsched --runtimes "$MODE" --forecasts --forecast-gap "$GAP" --arrival-window "$window" \
      | sed -n '/^forecasts of/,$p'
    ended=$(date +%s.%N)
    after=$(cut -d' ' -f1-3 /proc/loadavg)
    rm -f "$OUT/$1-w$window"/*.png
    "$PY" bench/record_timing.py "$OUT/timing.json" "$1-w$window" "$began" "$ended" "$before" "$after" 1
  done
}

before=$(cut -d' ' -f1-3 /proc/loadavg)
began=$(date +%s)
[[ -f "$TRACES/production-10k.csv" ]] || "$PY" bench/make_trace.py production --out "$TRACES/production-10k.csv"
[[ -f "$TRACES/tiresias-600.csv" ]] || "$PY" bench/make_trace.py tiresias-scaled --out "$TRACES/tiresias-600.csv"
run production-10k "$TRACES/production-10k.csv" "1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}"
run tiresias-600 "$TRACES/tiresias-600.csv" n32g4
"$PY" bench/forecasts_summary.py "$OUT" "$before" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$(( $(date +%s) - began ))" "bench/simulate_forecasts.sh"
