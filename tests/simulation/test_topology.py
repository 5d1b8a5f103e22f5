"""Topology in the replay: the rule that gives gangs constraints, the figures of where
gangs landed (``topology_book.py``), and the gangsched-topology policy end to end."""

import dataclasses
import importlib
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from scheduler_core.engine.model import Node, TopologyConstraint
from scheduler_core.simulation import (
    POLICIES,
    TOPOLOGY_POLICIES,
    ReplayOptions,
    compare,
    get_policies,
    load_cluster,
    parse_trace,
    replay,
)
from scheduler_core.simulation.metrics import summarise
from scheduler_core.simulation.rack_labels import BLOCK_LABEL, RACK_LABEL, rack_labels
from scheduler_core.simulation.topology_book import TopologyBook, shares, spread
from scheduler_core.simulation.topology_rule import TopologyModeError, TopologyRule, level_codes

from .helpers import trace_text

# The module (the package's ``replay`` is the function of the same name).
replay_module = importlib.import_module("scheduler_core.simulation.replay")


def _nodes(count: int, gpus: int = 4) -> tuple[Node, ...]:
    return tuple(
        Node(f"n{i}", {"cpu": 8_000, "nvidia.com/gpu": gpus}, rack_labels(i, f"n{i}")) for i in range(count)
    )


def _codes(nodes) -> dict[str, np.ndarray]:
    return {"block": level_codes(nodes, BLOCK_LABEL), "rack": level_codes(nodes, RACK_LABEL)}


# -- the figures, on hand-made placements ------------------------------------------------------


def test_spread_counts_domains_per_level():
    codes = _codes(_nodes(80))  # racks of 8 nodes, blocks of 32
    placements = [
        [0, 1, 2],  # one rack, one block
        [7, 8],  # two racks (0, 1), one block
        [0, 8, 16, 24],  # four racks, one block
        [30, 33, 70],  # three racks (3, 4, 8), three blocks (0, 1, 2)
    ]
    figures = spread(placements, codes)
    assert figures["gangs"] == 4
    assert figures["levels"]["rack"] == {
        "one_domain_share": 0.25,
        "avg_domains": round((1 + 2 + 4 + 3) / 4, 3),
    }
    assert figures["levels"]["block"] == {
        "one_domain_share": 0.75,
        "avg_domains": round((1 + 1 + 1 + 3) / 4, 3),
    }


def test_spread_of_no_gang_is_none_not_zero():
    figures = spread([], _codes(_nodes(8)))
    assert figures["gangs"] == 0
    assert figures["levels"]["rack"] == {"one_domain_share": None, "avg_domains": None}


def test_a_node_without_the_label_is_a_domain_of_its_own():
    nodes = (Node("a", {"cpu": 1}), Node("b", {"cpu": 1}), Node("c", {"cpu": 1}, {RACK_LABEL: "r"}))
    codes = level_codes(nodes, RACK_LABEL)
    assert len(set(codes.tolist())) == 3
    assert spread([[0, 1]], {"rack": codes})["levels"]["rack"]["one_domain_share"] == 0.0


def test_the_book_keeps_the_last_start_and_splits_multi_node_from_eligible():
    book = TopologyBook(_nodes(64))
    book.start(0, [3, 3, 3], eligible=False)  # one node: not multi-node
    book.start(1, [0, 40], eligible=True)  # two racks, two blocks
    book.start(2, [9, 10], eligible=False)  # multi-node, one rack, not eligible
    book.start(3, [1], eligible=True)  # eligible, landed on one node
    book.start(1, [16, 17], eligible=True)  # job 1 restarted: its last start counts
    summary = book.summary()
    assert summary["jobs"].tolist() == [0, 1, 2, 3]
    assert summary["nodes"].tolist() == [1, 2, 2, 1]
    assert summary["eligible"].tolist() == [False, True, False, True]
    assert summary["domains"]["rack"].tolist() == [1, 1, 1, 1]
    multi = shares({name: counts[summary["nodes"] > 1] for name, counts in summary["domains"].items()})
    assert multi == {
        "gangs": 2,
        "levels": {
            "block": {"one_domain_share": 1.0, "avg_domains": 1.0},
            "rack": {"one_domain_share": 1.0, "avg_domains": 1.0},
        },
    }


# -- the rule ----------------------------------------------------------------------------------


def test_the_rule_constrains_only_gangs_that_may_span_nodes():
    nodes = _nodes(64)
    alloc = np.array([[8_000, 4]] * 64, dtype=np.int64)  # cpu, nvidia.com/gpu
    rule = TopologyRule(nodes, alloc, "preferred")
    worker = np.array([1_000.0, 1.0])
    assert rule.constraint(worker, 1) is None  # one worker never spans nodes
    assert rule.constraint(worker, 4) is None  # fits on one node (every node)
    assert rule.constraint(worker, 5) == TopologyConstraint(preferred=RACK_LABEL, topology="racks")
    assert rule.topology.levels == ("topology.gangsched.io/block", RACK_LABEL, "kubernetes.io/hostname")


def test_required_takes_the_narrowest_level_that_can_hold_the_gang():
    nodes = _nodes(64)  # a rack: 8 x 4 GPUs = 32; a block: 128
    alloc = np.array([[8_000, 4]] * 64, dtype=np.int64)
    rule = TopologyRule(nodes, alloc, "required")
    worker = np.array([1_000.0, 1.0])
    assert rule.constraint(worker, 32).required == RACK_LABEL
    in_block = rule.constraint(worker, 33)
    assert (in_block.required, in_block.preferred) == (BLOCK_LABEL, RACK_LABEL)
    too_big = rule.constraint(worker, 129)  # no block holds it: requiring one would starve it
    assert (too_big.required, too_big.preferred) == (None, RACK_LABEL)


def test_an_unknown_mode_is_refused_naming_it():
    with pytest.raises(TopologyModeError, match="'hard'"):
        TopologyRule(_nodes(1), np.zeros((1, 1), dtype=np.int64), "hard")


# -- the policy, end to end --------------------------------------------------------------------

# 80 nodes of 4 GPUs (10 racks, 3 blocks); 1-GPU fillers fragment the racks, then gangs of 2-12
# workers x 4 GPUs (whole nodes) and of 6 x 1 GPU arrive while the fillers still run.
CLUSTER = "80x{cpu=8,memory=32Gi,nvidia.com/gpu=4}"
TINY = trace_text(
    *[f"f{i},{i % 5},1,1,{300 + 37 * i},1,1Gi,1,0," for i in range(0, 200, 3)],
    *[f"g{i},{10 + 4 * i},{2 + i % 11},{2 + i % 11},{60 + 13 * i},1,1Gi,4,0," for i in range(16)],
    *[f"s{i},{12 + 5 * i},6,6,{90 + 7 * i},1,1Gi,1,0," for i in range(8)],
)


def _comparable(metrics: dict) -> dict:
    timing = {"scheduler_seconds", "scheduler_seconds_per_cycle_avg", "scheduler_seconds_per_cycle_p95"}
    return {key: value for key, value in metrics.items() if key not in timing | {"replay_wall_seconds"}}


def test_gangsched_topology_runs_and_its_figures_are_consistent():
    assert set(TOPOLOGY_POLICIES) <= set(POLICIES)
    assert POLICIES["gangsched-topology"].config.topology and not POLICIES["gangsched"].config.topology
    trace, cluster = parse_trace(TINY, "tiny"), load_cluster(CLUSTER)
    comparison = compare(trace, cluster, get_policies(list(TOPOLOGY_POLICIES)))
    results = comparison.results()
    assert results["topology"]["levels"][1] == RACK_LABEL and results["topology"]["mode"] == "preferred"
    for name in TOPOLOGY_POLICIES:
        metrics = results["policies"][name]
        assert metrics["jobs_finished"] == metrics["jobs_total"] == len(trace.jobs)
        figures = metrics["topology"]
        assert figures["eligible"]["gangs"] == 16 + 8  # every gang but the fillers exceeds a node
        assert 0 < figures["multi_node"]["gangs"] <= len(trace.jobs)
        for group in ("multi_node", "eligible"):
            for level in ("block", "rack"):
                share = figures[group]["levels"][level]["one_domain_share"]
                assert 0.0 <= share <= 1.0
                assert figures[group]["levels"][level]["avg_domains"] >= 1.0
            assert (
                figures[group]["levels"]["rack"]["avg_domains"]
                >= figures[group]["levels"]["block"]["avg_domains"]
            )
            assert figures[group]["avg_wait_s"] >= 0 and figures[group]["p95_wait_s"] >= 0
        by_size = figures["eligible"]["by_size"]
        assert sum(size["gangs"] for size in by_size.values()) == figures["eligible"]["gangs"]
        json.dumps(metrics)  # results.json material


def test_gangsched_topology_with_the_switch_off_is_plain_gangsched(monkeypatch):
    # Same jobs, constraints attached, EngineConfig.topology False: the engine ignores them, so
    # every figure equals gangsched's (which has no constraints at all).
    seen = []
    real = replay_module.run_cycle

    def spy(snapshot, now, config):
        seen.append((snapshot.topologies, [gang.topology for gang in snapshot.gangs], config.topology))
        return real(snapshot, now, config)

    monkeypatch.setattr(replay_module, "run_cycle", spy)
    trace, cluster = parse_trace(TINY, "tiny"), load_cluster(CLUSTER)
    topology = POLICIES["gangsched-topology"]
    off = dataclasses.replace(topology, config=dataclasses.replace(topology.config, topology=False))
    switched_off = summarise(replay(trace, cluster, off, ReplayOptions()))
    assert all(topologies and not on for topologies, _gangs, on in seen)
    assert any(constraint is not None for _t, gangs, _on in seen for constraint in gangs)
    seen.clear()
    plain = summarise(replay(trace, cluster, POLICIES["gangsched"], ReplayOptions()))
    assert all(not topologies and all(c is None for c in gangs) for topologies, gangs, _on in seen)
    assert _comparable(switched_off) == _comparable(plain)


def test_the_cli_prints_the_topology_rows_and_refuses_a_bad_mode(tmp_path, capsys):
    path = tmp_path / "tiny.csv"
    path.write_text(TINY)
    common = ["--trace", str(path), "--cluster", CLUSTER, "--processes", "1", "--out", str(tmp_path / "out")]
    call_command("simulate", *common, "--policy", "gangsched-topology", "--topology", "required")
    out = capsys.readouterr().out
    assert "| eligible gangs: in one rack; avg racks |" in out
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["topology"]["mode"] == "required"
    with pytest.raises(CommandError, match="unknown topology mode 'sometimes'"):
        call_command("simulate", *common, "--topology", "sometimes")


def test_required_gangs_land_inside_one_domain_of_their_level():
    # With the engine honouring constraints, no eligible gang started outside
    # one domain of its required level, and every job still finished.
    trace, cluster = parse_trace(TINY, "tiny"), load_cluster(CLUSTER)
    loop = replay_module._Loop(
        trace, cluster, POLICIES["gangsched-topology"], ReplayOptions(topology="required")
    )
    result = loop.run()
    assert not np.isnan(result.finish).any()
    codes = {
        RACK_LABEL: level_codes(cluster.nodes, RACK_LABEL),
        BLOCK_LABEL: level_codes(cluster.nodes, BLOCK_LABEL),
    }
    required = 0
    for job in sorted(loop.spans.eligible):
        spec = trace.jobs[job]
        request = np.array([spec.requests.get(r, 0) for r in loop.resources], dtype=np.float64)
        level = loop.rule.constraint(request, spec.workers).required
        if level is not None:
            required += 1
            assert len(set(codes[level][loop.spans.placed[job]].tolist())) == 1, spec.id
    assert required == 24
