"""bench/same_decisions.py: a replay's results compared with git's, timings left out."""

import json

import pytest

from .helpers import bench_module

RESULTS = "bench/results/simulate/tiresias-600/results.json"


@pytest.fixture(scope="module")
def same():
    return bench_module("same_decisions")


def test_timing_fields_are_left_out_at_any_depth(same):
    results = {
        "a": 1,
        "scheduler_seconds": 3.0,
        "p": [{"replay_wall_seconds": 2, "waits": [1, 2]}],
        "timing": {},
    }
    assert same.without_timings(results) == {"a": 1, "p": [{"waits": [1, 2]}]}


def test_differences_name_the_path_of_each_changed_decision(same):
    old = {"policies": [{"preemptions": 40, "avg_wait_s": 10}], "jobs": 5}
    new = {"policies": [{"preemptions": 41, "avg_wait_s": 10}], "extra": 1, "jobs": 5}
    assert same.differences(old, new) == (["/policies[0]/preemptions: 40 -> 41"], ["/extra"])
    assert same.differences(new, old) == (
        ["/extra (only in the committed file)", "/policies[0]/preemptions: 41 -> 40"],
        [],
    )


def test_a_rerun_that_only_moved_timings_is_the_same_and_a_changed_decision_is_not(
    same, tmp_path, monkeypatch, capsys
):
    committed = same.committed(same.ROOT / RESULTS, "HEAD")
    monkeypatch.setattr(same, "committed", lambda _path, _revision: committed)
    rerun = tmp_path / "results.json"

    def compare(results: dict) -> int:
        rerun.write_text(json.dumps(results))
        return same.main([str(rerun)])

    slower = json.loads(json.dumps(committed))
    assert _bump(slower, timings=True) and compare(slower) == 0
    changed = json.loads(json.dumps(committed))
    assert _bump(changed, timings=False) and compare(changed) == 1
    assert "DIFFERENT" in capsys.readouterr().out.splitlines()[-2]


def _bump(value, timings: bool) -> bool:
    """Add one to the first number under a timing key (``timings``) or to the first integer
    that is not one, wherever it is."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        timing = isinstance(key, str) and any(word in key for word in ("seconds", "wall", "timing"))
        if timing and timings and isinstance(item, int | float):
            value[key] = item + 1
            return True
        if timing and not timings:
            continue
        if not timings and isinstance(item, int) and not isinstance(item, bool):
            value[key] = item + 1
            return True
        if _bump(item, timings):
            return True
    return False


def test_a_rerun_written_elsewhere_is_compared_with_the_committed_file_it_names(same, tmp_path, capsys):
    """RERUN=COMMITTED: an oracle run of bench/simulate_runtimes.sh against the result of the
    script that replayed it first."""
    committed = same.committed(same.ROOT / RESULTS, "HEAD")
    rerun = tmp_path / "tiresias-600-oracle.json"
    rerun.write_text(json.dumps({**committed, "added_since": 1}))
    assert same.main([f"{rerun}={RESULTS}"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"same {rerun}={RESULTS}") and "new fields, not compared: /added_since" in out
    changed = json.loads(json.dumps(committed))
    assert _bump(changed, timings=False)
    rerun.write_text(json.dumps(changed))
    assert same.main([f"{rerun}={RESULTS}"]) == 1
    assert same.main([f"{rerun}=bench/results/simulate/production-10k/results.json"]) == 1
