"""Helpers for the KWOK-style tests: commands run as ``manage.py`` would run them."""

import json
from io import StringIO

import pytest
from django.core.management import call_command


def manage(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def manage_json(*args: str):
    return json.loads(manage(*args, "-o", "json"))


def write(tmp_path, text: str, name: str = "manifest.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    """Changes wake the scheduler on commit; these tests need no worker (the worker scenario
    overrides this fixture)."""
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)


NODES = """
apiVersion: v1
kind: Node
metadata:
  name: kwok-a
  labels: {gpu-model: V100M32, zone: a}
spec:
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule, timeAdded: "2026-01-01T00:00:00Z"}]
status:
  allocatable: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}
  capacity: {cpu: "96", memory: 512Gi}
---
apiVersion: v1
kind: Node
metadata: {name: kwok-b}
status:
  capacity: {cpu: 32000m, memory: 128Gi}
"""
