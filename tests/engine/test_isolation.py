"""The engine stays importable and testable without Django or any cluster client."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_engine_imports_neither_django_nor_a_cluster_client():
    probe = (
        "import sys, scheduler_core.engine, scheduler_core.engine.cycle;"
        "banned = {'django', 'kubernetes', 'celery', 'channels'};"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in banned);"
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, env={"PATH": ""}
    )
    assert out.stdout.strip() == ""


def test_no_engine_module_mentions_django_or_kubernetes_imports():
    for path in (ROOT / "scheduler_core" / "engine").rglob("*.py"):
        text = path.read_text()
        for banned in (
            "import django",
            "from django",
            "import kubernetes",
            "from kubernetes",
            "from scheduler_core.models",
        ):
            assert banned not in text, f"{path} has {banned!r}"
