#!/usr/bin/env bash
# Trace replay with topology: gangsched (today's placement: gangs land
# wherever there is room) against gangsched-topology (every gang that may span nodes kept inside
# one rack, else one block; topology_rule.py), on the same jobs in one run, on Alibaba's openb GPU
# node list (1,213 nodes, 6,212 GPUs of six models) with racks and blocks by the rule of
# scheduler_core/simulation/rack_labels.py (8 nodes a rack, 4 racks a block, in list order):
#   production-5k-alibaba  the production shape (bench/make_trace.py production: 1-8 GPUs as one
#                          pod, 16-256 GPUs as 8-GPU workers, i.e. whole 8-GPU nodes), 5,000 jobs
#                          at an offered load of 1.3 on 776 x 8 GPUs (the list's 6,212 GPUs), with
#                          32Gi of memory per GPU so a worker fits the list's 8-GPU G2 servers.
# Once per constraint mode ($MODES: preferred, required). JOBS=10000 replays 10,000 jobs of the
# same shape instead (production-10k-alibaba: a longer busy window). The node list is found by name in
# GANGSCHED_TRACES_DIR (a directory of traces kept outside the repository), or give NODES=path.
# Writes bench/results/simulate/topology-<name>-<mode>/results.json and the plots, and the wall
# time to timing.json as bench/simulate.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=bench/results/simulate
PROCESSES=${PROCESSES:-2}
MODES=${MODES:-preferred required}
JOBS=${JOBS:-5000}
NODES=${NODES:-$("$PY" -c 'from scheduler_core.simulation.trace_files import find_trace; print(find_trace("alibaba-openb-gpu-nodes.csv"))')}
mkdir -p "$OUT"

run() {  # name trace mode
  local began ended before after
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  began=$(date +%s.%N)
  "$PY" manage.py simulate --trace "$2" --cluster "$NODES" --out "$OUT/topology-$1-$3" \
    --processes "$PROCESSES" --topology "$3" --policy gangsched --policy gangsched-topology
  ended=$(date +%s.%N)
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  "$PY" bench/record_timing.py "$OUT/timing.json" "topology-$1-$3" "$began" "$ended" "$before" "$after" "$PROCESSES"
}

NAME="production-$((JOBS / 1000))k-alibaba"
TRACE="$OUT/$NAME.csv"
"$PY" bench/make_trace.py production --jobs "$JOBS" --nodes 776 --memory-per-gpu 32 --out "$TRACE"
for mode in $MODES; do
  run "$NAME" "$TRACE" "$mode"
done
