"""Seeding the simulated cluster from a Node manifest: the trace helper, seed_cluster
--nodes-file, and ``make run``'s bootstrap choosing it."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_core.models import Node
from scheduler_core.simulation.trace_files import REPOSITORY_TRACES

from .conftest import manage

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).parents[2]
TRACE = REPOSITORY_TRACES / "alibaba-openb-gpu-nodes-sample.csv"


def trace_to_manifest(csv: Path, tmp_path: Path, *args: str) -> Path:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench/nodes_from_trace.py"), str(csv), *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = tmp_path / "nodes.yaml"
    path.write_text(out)
    return path


def test_a_node_list_becomes_nodes_with_their_gpu_model(tmp_path):
    csv = tmp_path / "nodes.csv"
    csv.write_text("sn,cpu_milli,memory_mib,gpu,model\nNode_A,96000,786432,8,V100M32\nb,32000,131072,0,\n")
    path = trace_to_manifest(csv, tmp_path, "--taint-gpu")
    assert "Added 2 nodes" in manage("seed_cluster", "--nodes-file", str(path))
    a, b = Node.objects.get(name="node-a"), Node.objects.get(name="b")
    assert a.allocatable == {"cpu": 96000, "memory": 768 * 2**30, "pods": 110, "nvidia.com/gpu": 8}
    assert a.labels["gpu-model"] == "V100M32" and a.taints[0]["key"] == "nvidia.com/gpu"
    assert "gpu-model" not in b.labels and "nvidia.com/gpu" not in b.allocatable
    assert "nothing to do" in manage("seed_cluster", "--if-empty", "--nodes-file", str(path))


def test_the_alibaba_sample_seeds_its_122_nodes(tmp_path):
    manage("seed_cluster", "--if-empty", "--nodes-file", str(trace_to_manifest(TRACE, tmp_path)))
    assert Node.objects.count() == 122
    assert Node.objects.filter(labels__contains={"gpu-model": "T4"}).count() == 39


def test_make_run_seeds_from_the_nodes_file_only_when_it_is_given(monkeypatch):
    spec = importlib.util.spec_from_file_location("run_script", ROOT / "scripts/run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    calls = []
    monkeypatch.setattr(run, "manage", lambda *args: calls.append(args))
    monkeypatch.setattr(run, "manage_output", lambda *args: calls.append(args) or '{"user": "operator"}')
    run.bootstrap(16, 8000, "nodes.yaml")
    assert calls[1] == ("seed_cluster", "--if-empty", "--nodes-file", str(Path("nodes.yaml").resolve()))
    assert len(calls) == 2  # no demo workload in a replayed cluster
    calls.clear()
    run.bootstrap(16, 8000)
    assert calls[1:] == [("seed_cluster", "--if-empty", "--nodes", "16"), ("submit_demo", "--if-empty")]
