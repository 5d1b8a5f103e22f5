#!/usr/bin/env bash
# Replays without an oracle: the policies that read runtimes under each --runtimes mode.
#
# With no flag: gangsched (least-work-first order and backfilling) and coscheduling (which reads
# none: the reference of the targets), on
#   tiresias-600    bench/make_trace.py tiresias-scaled, on n32g4 (users: the model names);
#   production-10k  bench/make_trace.py production, on 1,000 nodes of 8 GPUs (users drawn apart);
#   series-2k       bench/make_trace.py series: users sending series of the same job, 32 x 8 GPUs.
# Writes bench/results/simulate-runtimes/<trace>-<mode>/results.json (no plots) and summary.json
# (the figures docs/forecasts.md shows, with the date, the machine and the load average).
#
# --queues: bench/simulate_queues.sh's replays (gangsched-queues, guarantee-reclaim, no-queues)
# on its default traces, tiresias-600, production-2k and long-flood, under the same trees (its
# production-10k, which it runs only when asked, takes most of an hour a mode and is left out);
# writes bench/results/simulate-runtimes/queues/<trace>-<mode>/.
# --topology: bench/simulate_topology.sh's replays (gangsched, gangsched-topology) on its
# production-5k-alibaba under each constraint mode ($TOPOLOGY_MODES: preferred required);
# writes bench/results/simulate-runtimes/topology/<trace>-<constraint>-<mode>/. It needs the full
# Alibaba node list by name in GANGSCHED_TRACES_DIR, or NODES=path.
# Each of the two also writes timing.json (each replay's wall time and load) and summary.json.
# The oracle runs must decide as the committed bench/simulate_queues.sh and simulate_topology.sh
# results did: bench/same_decisions.py RERUN=COMMITTED says so (docs/forecasts.md).
#
# ONLY=<trace> reruns one trace; MODES="limit learned" some modes. Run it niced on a shared
# machine: nice -n 10 bench/simulate_runtimes.sh --queues
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
TRACES=bench/results/simulate
OUT=bench/results/simulate-runtimes
PROCESSES=${PROCESSES:-2}
ONLY=${ONLY:-}
MODES=${MODES:-oracle limit learned}
SET=${1:-}
case "$SET" in
  "" | --queues | --topology) ;;
  *) echo "usage: $0 [--queues | --topology]" >&2; exit 2 ;;
esac
mkdir -p "$OUT"

run() {  # name trace cluster
  [[ -n "$ONLY" && "$ONLY" != "$1" ]] && return 0
  for mode in $MODES; do
    "$PY" manage.py simulate --trace "$2" --cluster "$3" --out "$OUT/$1-$mode" --processes "$PROCESSES" \
      --policy gangsched --policy coscheduling --runtimes "$mode" >/dev/null
    rm -f "$OUT/$1-$mode"/*.png
    echo "$1 $mode done"
  done
}

run_timed() {  # dir name trace cluster mode -- simulate arguments
  local dir=$1 name=$2 trace=$3 cluster=$4 mode=$5 began ended before after
  shift 6
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  began=$(date +%s.%N)
  "$PY" manage.py simulate --trace "$trace" --cluster "$cluster" --out "$dir/$name" \
    --processes "$PROCESSES" --runtimes "$mode" "$@" >/dev/null
  ended=$(date +%s.%N)
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  rm -f "$dir/$name"/*.png
  "$PY" bench/record_timing.py "$dir/timing.json" "$name" "$began" "$ended" "$before" "$after" "$PROCESSES"
}

queues() {  # name trace cluster tree [make_trace.py arguments]
  [[ -n "$ONLY" && "$ONLY" != "$1" ]] && return 0
  [[ -f "$2" ]] || "$PY" bench/make_trace.py "${@:5}" --out "$2"
  for mode in $MODES; do
    run_timed "$OUT/queues" "$1-$mode" "$2" "$3" "$mode" -- --queues "$4" \
      --policy gangsched-queues --policy guarantee-reclaim --policy no-queues
  done
}

before=$(cut -d' ' -f1-3 /proc/loadavg)
began=$(date +%s)
case "$SET" in
  --queues)
    QUEUES=${QUEUES:-lab/nlp=40%,lab/vision=30%,ops/batch=20%,ops/dev=10%}
    FLOOD_QUEUES=${FLOOD_QUEUES:-lab/nlp=20%,lab/vision=20%,ops/batch=10%,ops/dev=0%}
    mkdir -p "$OUT/queues"
    queues tiresias-600 "$TRACES/tiresias-600.csv" n32g4 "$QUEUES" tiresias-scaled
    queues production-2k "$TRACES/production-2k.csv" "200x{cpu=64,memory=512Gi,nvidia.com/gpu=8}" "$QUEUES" \
      production --jobs 2000 --nodes 200
    if [[ -z "$ONLY" || "$ONLY" == long-flood ]]; then
      [[ -f "$TRACES/long-flood.csv" ]] || "$PY" bench/make_flood_trace.py --out "$TRACES/long-flood.csv"
      queues long-flood "$TRACES/long-flood.csv" n32g4 "$FLOOD_QUEUES"
    fi
    SUMMARY_DIR=$OUT/queues
    ;;
  --topology)
    NODES=${NODES:-$("$PY" -c 'from scheduler_core.simulation.trace_files import find_trace; print(find_trace("alibaba-openb-gpu-nodes.csv"))')}
    NAME=production-5k-alibaba
    mkdir -p "$OUT/topology"
    "$PY" bench/make_trace.py production --jobs 5000 --nodes 776 --memory-per-gpu 32 --out "$TRACES/$NAME.csv"
    for constraint in ${TOPOLOGY_MODES:-preferred required}; do
      for mode in $MODES; do
        run_timed "$OUT/topology" "$NAME-$constraint-$mode" "$TRACES/$NAME.csv" "$NODES" "$mode" -- \
          --topology "$constraint" --policy gangsched --policy gangsched-topology
      done
    done
    SUMMARY_DIR=$OUT/topology
    ;;
  *)
    "$PY" bench/make_trace.py production --out "$TRACES/production-10k.csv"
    "$PY" bench/make_trace.py tiresias-scaled --out "$TRACES/tiresias-600.csv"
    "$PY" bench/make_trace.py series --out "$TRACES/series-2k.csv"
    run tiresias-600 "$TRACES/tiresias-600.csv" n32g4
    run production-10k "$TRACES/production-10k.csv" "1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}"
    run series-2k "$TRACES/series-2k.csv" "32x{cpu=64,memory=512Gi,nvidia.com/gpu=8}"
    SUMMARY_DIR=$OUT
    ;;
esac
"$PY" bench/runtimes_summary.py "$SUMMARY_DIR" "$before" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$(( $(date +%s) - began ))" "bench/simulate_runtimes.sh $SET"
