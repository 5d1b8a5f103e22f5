"""The forecast stays pure like the engine: no Django, no cluster client, no Celery."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_forecast_imports_neither_django_nor_a_cluster_client():
    probe = (
        "import sys, scheduler_core.forecast;"
        "banned = {'django', 'kubernetes', 'celery', 'channels', 'rest_framework'};"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in banned)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, env={"PATH": ""}
    )
    assert out.stdout.strip() == ""
