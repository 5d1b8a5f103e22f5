"""bench/runtimes_summary.py: one summary per set of bench/simulate_runtimes.sh, the targets only
where gangsched meets coscheduling, the queue and topology figures where the replays have them."""

import json

from .helpers import ROOT, bench_module

COMMITTED = ROOT / "bench/results/simulate"


def _copy(source: str, target) -> None:
    target.mkdir(parents=True)
    (target / "results.json").write_text((COMMITTED / source / "results.json").read_text())


def test_queue_and_topology_replays_are_summed_up_without_targets(tmp_path, capsys):
    summary = bench_module("runtimes_summary")
    _copy("queues-tiresias-600", tmp_path / "queues" / "tiresias-600-oracle")
    _copy("topology-production-5k-alibaba-required", tmp_path / "topology" / "production-5k-required-oracle")
    for part in ("queues", "topology"):
        summary.main([str(tmp_path / part), "1.0 1.0 1.0", "2.0 2.0 2.0", "12", f"bench/x.sh --{part}"])
    queues = json.loads((tmp_path / "queues" / "summary.json").read_text())
    assert queues["command"] == "bench/x.sh --queues" and queues["targets"] == {}
    policies = queues["traces"]["tiresias-600"]["oracle"]
    assert set(policies) == {"gangsched-queues", "guarantee-reclaim", "no-queues"}
    reclaim = policies["gangsched-queues"]
    assert reclaim["jain_index"] is not None and "reclaim_evictions" in reclaim
    assert set(reclaim["queues"]) == {"nlp", "vision", "batch", "dev"}
    topology = json.loads((tmp_path / "topology" / "summary.json").read_text())
    both = topology["traces"]["production-5k-required"]["oracle"]
    eligible = both["gangsched-topology"]["eligible"]
    assert eligible["gangs"] > 0 and 0 <= eligible["one_rack_share"] <= 1
    assert both["gangsched"]["eligible"]["gangs"] == eligible["gangs"]  # the same jobs, measured alike
    assert "gangsched-topology" in capsys.readouterr().out
