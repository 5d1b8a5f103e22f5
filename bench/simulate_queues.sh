#!/usr/bin/env bash
# Trace replay with queues: three queue policies on the same trace, in one run:
#   gangsched-queues   queues with fair-share reclaim (gangsched's default with queues);
#   guarantee-reclaim  queues, reclaim only up to a queue's guarantee (Kueue, KAI-Scheduler);
#   no-queues          gangsched as before queues, measured per tenant all the same.
# Jobs get tenants by the rule of scheduler_core/simulation/tenants.py (the dev team floods the
# cluster in the first third of the trace, then every team submits), under $QUEUES (default:
# four teams guaranteed 40/30/20/10% of the cluster under two parents).
# long-flood (bench/make_flood_trace.py) is the case the two reclaim rules differ on: one team
# without a guarantee fills the cluster with two-hour jobs, then three teams guaranteed half of it
# submit; it runs under its own tree, $FLOOD_QUEUES.
# Writes bench/results/simulate/queues-<name>/results.json and the plots, and the wall time to
# timing.json as bench/simulate.sh does. ONLY=tiresias-600 runs one trace. With queues a cycle
# sees every running pod (no merging: any running gang may be reclaimed) and each queue's window
# of pending jobs (none is left out as certain to fail: reclaim may make room), so the replay is
# far slower than bench/simulate.sh's: production-2k (the production shape, 2,000 jobs on 200
# nodes) takes minutes; a production-10k run was stopped after 44 minutes with a replay unfinished.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=bench/results/simulate
PROCESSES=${PROCESSES:-2}
ONLY=${ONLY:-}
QUEUES=${QUEUES:-lab/nlp=40%,lab/vision=30%,ops/batch=20%,ops/dev=10%}
FLOOD_QUEUES=${FLOOD_QUEUES:-lab/nlp=20%,lab/vision=20%,ops/batch=10%,ops/dev=0%}
mkdir -p "$OUT"

run() {  # name trace cluster [make_trace.py arguments]; the tree is $TREE, else $QUEUES
  [[ -n "$ONLY" && "$ONLY" != "$1" ]] && return 0
  [[ -f "$2" ]] || "$PY" bench/make_trace.py "${@:4}" --out "$2"
  local tree=${TREE:-$QUEUES}
  local began ended before after
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  began=$(date +%s.%N)
  "$PY" manage.py simulate --trace "$2" --cluster "$3" --out "$OUT/queues-$1" --processes "$PROCESSES" \
    --queues "$tree" --policy gangsched-queues --policy guarantee-reclaim --policy no-queues
  ended=$(date +%s.%N)
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  "$PY" bench/record_timing.py "$OUT/timing.json" "queues-$1" "$began" "$ended" "$before" "$after" "$PROCESSES"
}

run tiresias-600 "$OUT/tiresias-600.csv" n32g4 tiresias-scaled
run production-2k "$OUT/production-2k.csv" "200x{cpu=64,memory=512Gi,nvidia.com/gpu=8}" production --jobs 2000 --nodes 200
if [[ -z "$ONLY" || "$ONLY" == long-flood ]]; then
  [[ -f "$OUT/long-flood.csv" ]] || "$PY" bench/make_flood_trace.py --out "$OUT/long-flood.csv"
  TREE=$FLOOD_QUEUES run long-flood "$OUT/long-flood.csv" n32g4
fi
[[ -n "$ONLY" ]] || { echo "production-10k: run it with ONLY=production-10k (long)"; exit 0; }
run production-10k "$OUT/production-10k.csv" "1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}" production
