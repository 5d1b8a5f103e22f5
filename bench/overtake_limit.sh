#!/usr/bin/env bash
# How gangsched's queue-order limit (GANGSCHED_OVERTAKE_LIMIT_S, engine/queue.py) trades the
# average wait against the wait of the biggest gangs: the gangsched policy alone, replayed on the
# two busy traces of bench/simulate.sh (run that first: it writes the traces) at several limits.
# 0 is FIFO; 1e12 is least work first with no practical bound. Writes
# bench/results/simulate/overtake_limit.json and prints one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=bench/results/simulate
LIMITS=${LIMITS:-0 600 1800 3600 7200 1e12}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

runs=()
for limit in $LIMITS; do
  runs+=("tiresias-600 $OUT/tiresias-600.csv n32g4 $limit")
  runs+=("production-10k $OUT/production-10k.csv 1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8} $limit")
done
one() {  # name trace cluster limit
  "$PY" manage.py simulate --trace "$2" --cluster "$3" --policy gangsched --overtake-limit "$4" \
      --processes 1 --out "$TMP/$1-$4" >/dev/null
}
export -f one
export PY TMP
printf '%s\n' "${runs[@]}" | xargs -P "${PROCESSES:-2}" -L 1 bash -c 'one $0 $1 $2 $3'

"$PY" - "$TMP" "$OUT/overtake_limit.json" <<'PY'
import json, sys
from pathlib import Path

tmp, out = Path(sys.argv[1]), Path(sys.argv[2])
rows = {}
for path in sorted(tmp.glob("*/results.json")):
    m = json.loads(path.read_text())["policies"]["gangsched"]
    sizes = m["wait_by_size"]
    big = sizes.get("65+") or sizes.get("2-8")
    row = {
        "overtake_limit_s": m["overtake_limit_s"],
        "jobs_finished": m["jobs_finished"],
        "jobs_total": m["jobs_total"],
        "deadlocked_jobs": m["deadlocked_jobs"],
        "avg_wait_s": m["avg_wait_s"],
        "p95_wait_s": m["p95_wait_s"],
        "avg_jct_s": m["avg_jct_s"],
        "wait_by_size": sizes,
    }
    trace = path.parent.name.rsplit("-", 1)[0]
    rows.setdefault(trace, []).append(row)
    print(f"{trace:15} limit {m['overtake_limit_s']:>14,.0f}: avg wait {m['avg_wait_s']:7.1f} s, "
          f"p95 {m['p95_wait_s']:7.1f} s; largest size class avg/p95 {big['avg_wait_s']:.1f}/{big['p95_wait_s']:.1f} s")
for trace in rows:
    rows[trace].sort(key=lambda row: row["overtake_limit_s"])
out.write_text(json.dumps(rows, indent=2) + "\n")
print(f"wrote {out}")
PY
