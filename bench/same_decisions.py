"""Whether a replay's decisions are the ones committed: ``results.json`` files against git.

    python bench/same_decisions.py bench/results/simulate/*/results.json [--against REV]
    python bench/same_decisions.py RERUN=COMMITTED ...

A speed-up of the engine or the replay must not change one decision. Rerunning the
replay scripts (``bench/simulate*.sh``) rewrites their ``results.json``; this compares each with
the version at ``REV`` (default HEAD) with every timing field left out (a key naming seconds,
wall time or timing: the only figures that may move). It prints ``same`` or ``DIFFERENT`` and the
first differing paths per file, and exits 1 if any file differs. A field only in the rerun is a
metric added since (listed, not a difference); a field only in the committed file is one.
A file given as ``RERUN=COMMITTED`` is compared with the committed version of another path: an
``oracle`` run that bench/simulate_runtimes.sh wrote beside its other modes against the result of
the script that replayed it first.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMING_WORDS = ("seconds", "wall", "timing")


def without_timings(value):
    """``value`` with every key that names a time measurement dropped, recursively."""
    if isinstance(value, dict):
        return {
            k: without_timings(v) for k, v in value.items() if not any(word in k for word in TIMING_WORDS)
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def differences(old, new, path: str = "") -> tuple[list[str], list[str]]:
    """Where ``old`` and ``new`` differ, as JSON paths, and the fields only ``new`` has."""
    if isinstance(old, dict) and isinstance(new, dict):
        changed: list[str] = []
        added: list[str] = []
        for key in sorted(set(old) | set(new)):
            if key not in new:
                changed.append(f"{path}/{key} (only in the committed file)")
            elif key not in old:
                added.append(f"{path}/{key}")
            else:
                more_changed, more_added = differences(old[key], new[key], f"{path}/{key}")
                changed += more_changed
                added += more_added
        return changed, added
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        changed, added = [], []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            more_changed, more_added = differences(a, b, f"{path}[{i}]")
            changed += more_changed
            added += more_added
        return changed, added
    return ([] if old == new else [f"{path}: {old!r} -> {new!r}"[:200]]), []


def committed(path: Path, revision: str) -> dict:
    relative = path.resolve().relative_to(ROOT)
    shown = subprocess.run(
        ["git", "show", f"{revision}:{relative.as_posix()}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(shown.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--against", default="HEAD", help="git revision to compare with (default HEAD)")
    args = parser.parse_args(argv)
    differing = 0
    for given in args.files:
        path, _, other = str(given).partition("=")
        path = Path(path)
        new = without_timings(json.loads(path.read_text()))
        old = without_timings(committed(Path(other) if other else path, args.against))
        found, added = differences(old, new)
        print(f"{'same' if not found else 'DIFFERENT'} {given}")
        for line in found[:5]:
            print(f"    {line}")
        if added:
            print(f"    new fields, not compared: {', '.join(added[:3])}{' ...' if len(added) > 3 else ''}")
        differing += bool(found)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
